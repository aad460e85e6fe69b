"""How a message of the protocol is declared: its fields, their order, types, which are optional.

Every message (and every map inside one: the observation, the clock, each event) is one
``Record``: a tuple of ``Field`` in wire order. Everything else about a message is
derived from its record, so a field changes in one place:

- ``Record.make`` builds the Python map (what the SDK, the logs and the tests hold), keys
  in declared order, optional fields left out when None;
- ``Record.check`` validates a map that arrived (the SDK's check of the referee), raising
  ``RemoteProtocolError`` that names the field and what was expected;
- ``Record.schema`` is its JSON Schema (``protocol/schema.py``);
- ``Record.head``, ``Record.key``, ``Record.run`` and ``Record.upto`` are the msgpack bytes of
  its parts (``codec.pack`` is compositional), from which a sender joins frames without
  building the map: the referee's request, event, game_start and game_end frames. A part
  that names fields out of declared order is refused when it is made (``LocalProtocolError``),
  so a sender's joined frames cannot silently fall out of step with the declaration.

A ``Kind`` is a field's type: how it is checked, how the schema writes it. The checks are
structural (types, bounds), as the parsers in ``messages`` are; value lists such as the
terminations go to the schema only (``Text(values=...)``): a bot should tolerate a value
newer than it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from protocol.cards import ALL_CARDS, SUITS
from protocol.codec import map_head, pack
from protocol.errors import LocalProtocolError, RemoteProtocolError


def describe(value: object, limit: int = 40) -> str:
    """A value as a bot author would recognise it in an error message: str quoted, nil,
    true/false, bin marked as such, containers by kind and size."""
    if value is None:
        return "nil"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (bytes, bytearray)):
        text = f"bin {bytes(value)!r}"
    elif isinstance(value, dict):
        return f"a map of {len(value)} entries" if len(value) != 1 else "a map of 1 entry"
    elif isinstance(value, (list, tuple)):
        return f"an array of {len(value)} elements" if len(value) != 1 else "an array of 1 element"
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def bad(field: str, problem: str) -> RemoteProtocolError:
    """The error for a field that is wrong, named by its path (``clock.move_ms``)."""
    return RemoteProtocolError(f"{field}: {problem}", field=field)


def join(path: str, key: str) -> str:
    """The path of ``key`` inside the map at ``path`` ("" for the message itself)."""
    return f"{path}.{key}" if path else key


def is_int(value: object) -> TypeGuard[int]:
    """An integer on the wire: msgpack true/false decode to bool, a subclass of int;
    they are not integers here."""
    return type(value) is int


class Kind:
    """A field's type. ``expected`` says what a valid value looks like ("a card like
    '6S'"), for errors; ``check`` raises ``RemoteProtocolError`` at ``path`` for a value
    that is not one; ``schema`` is its JSON Schema."""

    expected = "a value"

    def check(self, value: object, path: str) -> None:
        """Raise ``RemoteProtocolError`` naming ``path`` unless ``value`` is of this kind."""

    def schema(self) -> dict[str, Any]:
        return {}


class Int(Kind):
    """An integer, at least ``minimum`` (and at most ``maximum``, in the schema only);
    ``nullable``: nil too. ``expected`` overrides the derived text."""

    def __init__(self, minimum: int | None = None, *, maximum: int | None = None,
                 nullable: bool = False, expected: str | None = None) -> None:
        self.minimum, self.maximum, self.nullable = minimum, maximum, nullable
        self.expected = expected or (
            "an integer" if minimum is None else
            "a non-negative integer" if minimum == 0 else f"an integer >= {minimum}")

    def check(self, value: object, path: str) -> None:
        if self.nullable and value is None:
            return
        if not is_int(value) or (self.minimum is not None and value < self.minimum):
            raise bad(path, f"expected {self.expected}, got {describe(value)}")

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": ["integer", "null"] if self.nullable else "integer"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out


class Text(Kind):
    """A str (``nullable``: or nil), at most ``max_length`` characters, non-empty if
    ``nonempty``, printable if ``printable``; ``values``: the values the schema lists."""

    def __init__(self, *, max_length: int | None = None, nonempty: bool = False,
                 nullable: bool = False, printable: bool = False,
                 values: Sequence[str] | None = None) -> None:
        self.max_length, self.nonempty, self.nullable = max_length, nonempty, nullable
        self.printable, self.values = printable, values
        self.expected = "a non-empty str" if nonempty else "a str"

    def check(self, value: object, path: str) -> None:
        if self.nullable and value is None:
            return
        if type(value) is not str:
            suffix = " or nil" if self.nullable else ""
            raise bad(path, f"expected {self.expected}{suffix}, got {describe(value)}")
        if self.nonempty and not value:
            raise bad(path, "expected a non-empty str, got ''")
        if self.max_length is not None and len(value) > self.max_length:
            raise bad(path, f"is {len(value)} characters long; the limit is {self.max_length}")
        if self.printable and not value.isprintable():
            raise bad(path, "must be printable text without control characters, got "
                            f"{describe(value)}")

    def schema(self) -> dict[str, Any]:
        if self.values is not None:
            return {"enum": list(self.values)}
        out: dict[str, Any] = {"type": ["string", "null"] if self.nullable else "string"}
        if self.nonempty:
            out["minLength"] = 1
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        return out


class Plain(Kind):
    """A value of one Python type as msgpack decodes it (``bool``: true or false; ``dict``:
    a map whose fields this declaration does not fix, as the rules' options)."""

    def __init__(self, python: type, expected: str, json_type: str) -> None:
        self.python, self.expected, self.json_type = python, expected, json_type

    def check(self, value: object, path: str) -> None:
        if type(value) is not self.python:
            raise bad(path, f"expected {self.expected}, got {describe(value)}")

    def schema(self) -> dict[str, Any]:
        return {"type": self.json_type}


def Flag() -> Plain:  # noqa: N802 - a kind, as Int() and Text() are
    """true or false."""
    return Plain(bool, "true or false", "boolean")


def AnyMap() -> Plain:  # noqa: N802 - a kind, as Int() and Text() are
    """A map whose fields this declaration does not fix (``rules``: the options)."""
    return Plain(dict, "a map", "object")


class Card(Kind):
    """A card in canonical text ("6S", "TH"); ``nullable``: or nil."""

    expected = "a card like '6S'"

    def __init__(self, *, nullable: bool = False) -> None:
        self.nullable = nullable

    def check(self, value: object, path: str) -> None:
        if self.nullable and value is None:
            return
        # The referee always sends canonical text: "10H" or "th" would be its bug.
        if type(value) is not str or value not in ALL_CARDS:
            raise bad(path, f"expected a card like '6S', got {describe(value)}")

    def schema(self) -> dict[str, Any]:
        card = {"enum": sorted(ALL_CARDS)}
        return {"anyOf": [card, {"type": "null"}]} if self.nullable else card


class Suit(Kind):
    """A suit letter: C, D, H or S."""

    expected = "a suit letter"

    def check(self, value: object, path: str) -> None:
        if type(value) is not str or len(value) != 1 or value not in SUITS:
            raise bad(path, f"expected one of 'C', 'D', 'H', 'S', got {describe(value)}")

    def schema(self) -> dict[str, Any]:
        return {"enum": list(SUITS)}


class Choice(Kind):
    """One of ``values`` (str)."""

    def __init__(self, values: Sequence[str]) -> None:
        self.values = tuple(values)
        self.expected = "one of " + ", ".join(repr(v) for v in self.values)

    def check(self, value: object, path: str) -> None:
        if type(value) is not str or value not in self.values:
            raise bad(path, f"expected {self.expected}, got {describe(value)}")

    def schema(self) -> dict[str, Any]:
        return {"enum": list(self.values)}


class Array(Kind):
    """An array of ``item``; ``min_items``: at least that many (``empty``: the problem
    named when it is empty)."""

    expected = "an array"

    def __init__(self, item: Kind, *, min_items: int = 0, empty: str | None = None) -> None:
        self.item, self.min_items, self.empty = item, min_items, empty

    def check(self, value: object, path: str) -> None:
        if type(value) is not list:
            raise bad(path, f"expected an array, got {describe(value)}")
        if len(value) < self.min_items:
            raise bad(path, self.empty or f"expected at least {self.min_items} elements")
        for index, element in enumerate(value):
            self.item.check(element, f"{path}[{index}]")

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "array", "items": self.item.schema()}
        if self.min_items:
            out["minItems"] = self.min_items
        return out


class Pair(Kind):
    """A fixed array of two elements (a table slot: the attack card, the cover or nil).
    Structural check of its length and elements."""

    expected = "an array of 2 elements"

    def __init__(self, first: Kind, second: Kind) -> None:
        self.first, self.second = first, second

    def check(self, value: object, path: str) -> None:
        if type(value) is not list or len(value) != 2:
            raise bad(path, f"expected {self.expected}, got {describe(value)}")
        self.first.check(value[0], f"{path}[0]")
        self.second.check(value[1], f"{path}[1]")

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "prefixItems": [self.first.schema(), self.second.schema()],
                "minItems": 2, "maxItems": 2}


class Ref(Kind):
    """A value the schema defines once under ``$defs`` (the action), checked by ``parse``
    (raising ``RemoteProtocolError`` at the path given)."""

    def __init__(self, name: str, parse: Callable[[object, str], object], expected: str) -> None:
        self.name, self.parse, self.expected = name, parse, expected

    def check(self, value: object, path: str) -> None:
        self.parse(value, path)

    def schema(self) -> dict[str, Any]:
        return {"$ref": f"#/$defs/{self.name}"}


CARDS = Array(Card())
"""A card list in canonical text (a hand, the discard pile)."""


@dataclass(frozen=True)
class Field:
    """One field of a record: its key, its kind, and whether it may be left out
    (``optional``: absent; a present optional field is checked like any other).
    ``private``: the field is hidden information, sent only to the seat the record is
    about (an event's ``seat``: the cards a seat drew, the mark that its move was forced);
    the others get the record without it. A private field is optional."""

    name: str
    kind: Kind
    optional: bool = False
    private: bool = False

    def __post_init__(self) -> None:
        if self.private and not self.optional:
            raise LocalProtocolError(f"field {self.name}: a private field must be optional")


class Record(Kind):
    """A map of declared ``fields``, in wire order; a message when ``type`` is given (then
    its first key is ``type``, whose value is the message type). ``deep``: ``check``
    checks each field (else only that the value is a map: the observation, whose fields
    the schema and the referee's own tests pin down, is read by bots as they like).
    ``private``: the whole record is hidden information, sent only to the seat it is about
    (see ``Field.private``)."""

    expected = "a map"

    def __init__(self, type: str | None, fields: Sequence[Field], *, deep: bool = True,
                 private: bool = False) -> None:
        self.type = type
        self.fields = tuple(fields)
        self.deep = deep
        self.private = private
        self.by_name = {f.name: f for f in self.fields}
        if len(self.by_name) != len(self.fields):
            raise LocalProtocolError(f"{type}: a field is declared twice")

    @property
    def names(self) -> tuple[str, ...]:
        """Every field's key, in wire order (``type`` first for a message)."""
        own = tuple(f.name for f in self.fields)
        return ("type", *own) if self.type is not None else own

    # -- the map form -------------------------------------------------------------------

    def make(self, **values: Any) -> dict[str, Any]:
        """The map of ``values``, keys in declared order; an optional field that is None
        (or not given) is left out. A value for an undeclared field, or a required one
        missing, raises ``LocalProtocolError`` (the sender's bug)."""
        out: dict[str, Any] = {} if self.type is None else {"type": self.type}
        for f in self.fields:
            value = values.get(f.name)
            if value is None and f.optional:
                continue
            if value is None and f.name not in values:
                raise LocalProtocolError(f"{self.type or 'map'}: {f.name} is required")
            out[f.name] = value
        if len(values) > len(self.fields) or any(k not in self.by_name for k in values):
            unknown = sorted(set(values) - set(self.by_name))
            raise LocalProtocolError(f"{self.type or 'map'}: no field {', '.join(unknown)}")
        return out

    def check(self, value: object, path: str = "") -> None:
        """Check ``value`` is this record: a map, then (if ``deep``) each declared field in
        order, present unless optional, of its kind. Unknown keys are allowed."""
        if type(value) is not dict:
            raise bad(path or "message", f"expected a map, got {describe(value)}")
        if not self.deep:
            return
        for f in self.fields:
            if f.name not in value:
                if f.optional:
                    continue
                raise bad(join(path, f.name), f"missing; expected {f.kind.expected}")
            f.kind.check(value[f.name], join(path, f.name))

    def schema(self) -> dict[str, Any]:
        props = {f.name: f.kind.schema() for f in self.fields}
        required = [f.name for f in self.fields if not f.optional]
        if self.type is not None:
            props = {"type": {"const": self.type}, **props}
            required = ["type", *required]
        return {"type": "object", "properties": props, "required": required}

    # -- the packed form: msgpack bytes of parts, to join frames from ----------------------

    def head(self, present: Sequence[str] | None = None) -> bytes:
        """The map's head and, for a message, its ``type`` field: the bytes every frame of
        it starts with. ``present``: the optional fields it holds (default none)."""
        chosen = set(present or ())
        for name in chosen:
            if not self.by_name[name].optional:
                raise LocalProtocolError(f"{self.type or 'map'}: {name} is not optional")
        count = sum(1 for f in self.fields if not f.optional or f.name in chosen)
        if self.type is None:
            return map_head(count)
        return map_head(count + 1) + pack("type") + pack(self.type)

    def key(self, name: str) -> bytes:
        """The packed key of field ``name`` (which must be declared)."""
        if name not in self.by_name:
            raise LocalProtocolError(f"{self.type or 'map'}: no field {name}")
        return pack(name)

    def follows(self, before: str | None, after: str) -> None:
        """Refuse (``LocalProtocolError``) unless field ``after`` comes right after
        ``before`` (None: first) in wire order, optional fields in between skipped only
        if absent: a joined frame may then put their parts next to each other."""
        names = [f.name for f in self.fields]
        start = 0 if before is None else names.index(before) + 1
        stop = names.index(after)
        between = [n for n in names[start:stop] if not self.by_name[n].optional]
        if stop < start or between:
            raise LocalProtocolError(
                f"{self.type or 'map'}: {after} does not follow {before}; fields between: {between}")

    def run(self, values: Mapping[str, Any], then: str | None = None) -> bytes:
        """The packed key and value of each field of ``values`` (consecutive fields in
        declared order; given packed, as bytes, or as a value ``pack`` packs), then the key
        of ``then`` if given (a part may end on the next field's key). Refuses a run out of
        order or with a gap (``follows``)."""
        names = list(values)
        parts: list[bytes] = []
        for k, name in enumerate(names):
            if k:
                self.follows(names[k - 1], name)
            value = values[name]
            parts.append(self.key(name) + (value if isinstance(value, bytes) else pack(value)))
        if then is not None:
            if names:
                self.follows(names[-1], then)
            parts.append(self.key(then))
        return b"".join(parts)
