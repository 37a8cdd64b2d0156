"""A parser for polynomial and number strings that cannot execute code.

``sympy.sympify`` of a string evaluates Python (``sympify("__import__('os').system(...)")`` runs
the command), so :mod:`rlct` never calls it on user input. Strings are read with Python's
:func:`ast.parse` (which only builds a syntax tree) and the tree is turned into sympy objects by
a whitelist: integer literals, names that are plain identifiers and map to given symbols, the
operators ``+ − * /``, ``**`` and ``^`` (both mean power), unary ``+`` and ``−``, and parentheses.
Anything else (calls, attributes, subscripts, floats, strings, comparisons, lambdas, …) is
refused with an error that names the argument.

Sizes are bounded before anything is computed: the string's length, the depth of the syntax tree
(≤ ``MAX_DEPTH``, counted without recursion, so the bound does not move with
:func:`sys.getrecursionlimit`, which torch, hypothesis and others raise), every exponent
(|e| ≤ ``MAX_EXPONENT``) and the bit length of every number built (≤ ``MAX_BITS``), so
``x**10**10`` and ``2**2**2**2**2**2`` are refused at once instead of expanded. Powers are not
expanded here: ``(x + y)**50`` stays a power until the caller decides it is small enough.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import sympy as sp

from .errors import RLCTError, TooLargeError

__all__ = ["MAX_BITS", "MAX_DEPTH", "MAX_EXPONENT", "MAX_LENGTH", "parse_expression"]

MAX_LENGTH = 10_000
"""The longest string parsed (characters)."""

MAX_EXPONENT = 10_000
"""The largest |exponent| in a parsed power."""

MAX_DEPTH = 2_000
"""The deepest syntax tree read, in expression nodes (a sum of n terms is n deep)."""

MAX_BITS = 100_000
"""The largest bit length (numerator plus denominator) of a number built while parsing."""

_BINARY = {ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow}
_UNARY = {ast.USub, ast.UAdd}


class _Sum(list):
    """Terms of a sum being read left to right (added once at the end: linear, not quadratic)."""


class _Product(list):
    """Factors of a product being read left to right."""


def _depth(root: ast.AST) -> int:
    """The number of expression nodes on the longest root-to-leaf path, without recursion."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend(
            (child, depth + 1)
            for child in ast.iter_child_nodes(node)
            if isinstance(child, ast.expr)
        )
    return deepest


def _bits(r: sp.Rational) -> int:
    return int(r.p).bit_length() + int(r.q).bit_length()


class _Reader:
    """Turns a whitelisted syntax tree into a sympy expression, without recursion."""

    def __init__(
        self, name: str, text: str, symbols: Mapping[str, sp.Symbol], error: type[RLCTError]
    ) -> None:
        self.name, self.text, self.symbols, self.error = name, text, symbols, error

    def refuse(self, what: str) -> RLCTError:
        return self.error(f"{self.name} = {self.text!r}: {what}")

    def children(self, node: ast.AST) -> list[ast.expr]:
        if isinstance(node, ast.Constant | ast.Name):
            return []
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return [node.operand]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return [node.left, node.right]
        raise self.refuse(
            f"{ast.unparse(node)!r} ({type(node).__name__}) is not allowed; only integers, "
            "variable names, + − * / ** ^ and parentheses are"
        )

    def read(self, root: ast.expr) -> sp.Expr:
        stack: list[tuple[ast.expr, bool]] = [(root, False)]
        values: list[object] = []
        while stack:
            node, ready = stack.pop()
            kids = self.children(node)
            if not ready:
                stack.append((node, True))
                stack.extend((k, False) for k in reversed(kids))
                continue
            args = values[len(values) - len(kids) :]
            del values[len(values) - len(kids) :]
            values.append(self.combine(node, args))
        return self.done(values[0])

    def done(self, value: object) -> sp.Expr:
        """A finished sympy expression from a value or a pending sum / product."""
        if isinstance(value, _Sum):
            return sp.Add(*value)
        if isinstance(value, _Product):
            numbers = [f for f in value if isinstance(f, sp.Rational)]
            if sum(_bits(f) for f in numbers) > MAX_BITS:
                raise self.too_large("a product of numbers")
            return sp.Mul(*value)
        return value  # type: ignore[return-value]

    def too_large(self, what: str) -> TooLargeError:
        return TooLargeError(
            f"{self.name} = {self.text[:80]!r}{'…' if len(self.text) > 80 else ''}: {what} would "
            f"have more than {MAX_BITS} bits; write the number in lowest terms or use sympy objects"
        )

    def combine(self, node: ast.expr, args: list[object]) -> object:
        if isinstance(node, ast.Constant):
            return self.literal(node.value)
        if isinstance(node, ast.Name):
            if node.id not in self.symbols:
                known = ", ".join(self.symbols) or "none here"
                raise self.refuse(f"the name {node.id!r} is not in the variables ({known})")
            return self.symbols[node.id]
        if isinstance(node, ast.UnaryOp):
            operand = self.done(args[0])
            return -operand if isinstance(node.op, ast.USub) else operand
        left, right = args
        op = type(node.op)
        if op in (ast.Add, ast.Sub):
            terms = left if isinstance(left, _Sum) else _Sum([self.done(left)])
            r = self.done(right)
            terms.append(r if op is ast.Add else -r)
            return terms
        if op in (ast.Mult, ast.Div):
            factors = left if isinstance(left, _Product) else _Product([self.done(left)])
            r = self.done(right)
            if op is ast.Div:
                if r == 0:
                    raise self.refuse("division by zero")
                r = sp.Pow(r, -1)
            factors.append(r)
            return factors
        return self.power(self.done(left), self.done(right))

    def literal(self, value: object) -> sp.Integer:
        if isinstance(value, bool) or not isinstance(value, int):
            kind = (
                "a float (give an exact fraction such as 1/2)" if isinstance(value, float) else ""
            )
            raise self.refuse(
                f"the literal {value!r} is {kind or type(value).__name__}; only integers are allowed"
            )
        if value.bit_length() > MAX_BITS:
            raise self.too_large("an integer literal")
        return sp.Integer(value)

    def power(self, base: sp.Expr, exp: sp.Expr) -> sp.Expr:
        if not isinstance(exp, sp.Integer):
            raise self.refuse(f"the exponent {exp} is not an integer")
        if abs(exp) > MAX_EXPONENT:
            raise TooLargeError(
                f"{self.name}: the exponent {exp} exceeds {MAX_EXPONENT} in absolute value"
            )
        if base == 0 and exp < 0:
            raise self.refuse("division by zero (0 to a negative power)")
        if isinstance(base, sp.Rational) and _bits(base) * abs(int(exp)) > MAX_BITS:
            raise self.too_large(f"the power {base}**{exp}")
        return sp.Pow(base, exp)


def parse_expression(
    text: str,
    name: str,
    symbols: Mapping[str, sp.Symbol] | None = None,
    error: type[RLCTError] = RLCTError,
) -> sp.Expr:
    """The sympy expression a string denotes, read without evaluating any code.

    ``symbols`` maps the names the string may use to sympy symbols (none: a number is expected);
    ``error`` is the class raised for a string that is not such an expression (the argument is
    named in its message). Too-long strings, exponents and numbers raise :class:`TooLargeError`.
    """
    if len(text) > MAX_LENGTH:
        raise TooLargeError(
            f"{name} is a string of {len(text)} characters; at most {MAX_LENGTH} are parsed "
            "(build larger expressions with sympy)"
        )
    # ``^`` means power, with the precedence of ``**`` (Python's ``^`` binds looser than ``+``).
    # Outside string literals, which the whitelist refuses anyway, it is only ever an operator.
    too_deep = TooLargeError(
        f"{name} nests too deeply for the parser (a sum or product of more than {MAX_DEPTH:,} "
        "terms, or deep parentheses); build it with sympy instead"
    )
    try:
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval")
    except RecursionError:
        raise too_deep from None
    except (SyntaxError, ValueError, MemoryError) as exc:
        reason = exc.msg if isinstance(exc, SyntaxError) else str(exc) or type(exc).__name__
        if "Exceeds the limit" in reason:  # an integer literal of more than 4,300 digits
            raise TooLargeError(
                f"{name} holds an integer literal of more than 4,300 digits"
            ) from None
        raise error(f"{name} = {text[:80]!r} is not a valid expression: {reason}") from None
    if _depth(tree.body) > MAX_DEPTH:
        raise too_deep
    return _Reader(name, text, symbols or {}, error).read(tree.body)
