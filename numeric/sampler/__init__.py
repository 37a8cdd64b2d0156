"""The transitions and the hot loop: SGLD's update (``sgld``), MALA (``mala``) and its
position-dependent metric (``mmala``), the minibatch gradient with its control variate
(``gradients``), blocks of steps eager or compiled (``kernel``), and the batch of chains
(``chains``).
"""

__all__: list[str] = []
