"""Untrusted XML into an ElementTree, refusing DOCTYPEs and entity declarations.

expat feeds an ``ElementTree.TreeBuilder`` directly, so a document type
declaration (and with it any entity expansion or external fetch) stops the
parse before it can do anything. Element names come out as ElementTree spells
them: ``{namespace}local``.
"""

from __future__ import annotations

from typing import Any
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

from statusgen.vendors._payload import fail


class _Refused(Exception):
    """Raised inside an expat callback to stop the parse."""


def _refuse_doctype(*_: Any) -> None:
    raise _Refused("has a DOCTYPE, which is refused")


def _refuse_entity(*_: Any) -> None:
    raise _Refused("declares entities, which is refused")


def _qname(name: str) -> str:
    namespace, sep, local = name.rpartition("}")
    return f"{{{namespace}}}{local}" if sep else local


def _parser(builder: TreeBuilder) -> Any:
    parser = expat.ParserCreate(namespace_separator="}")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse_doctype
    parser.EntityDeclHandler = _refuse_entity
    parser.UnparsedEntityDeclHandler = _refuse_entity
    parser.StartElementHandler = lambda name, attrs: builder.start(
        _qname(name), {_qname(k): v for k, v in attrs.items()}
    )
    parser.EndElementHandler = lambda name: builder.end(_qname(name))
    parser.CharacterDataHandler = builder.data
    return parser


def parse_xml(fmt: str, data: bytes | str) -> Element:
    """The root element of a document; ``VendorParseError`` naming ``fmt`` otherwise."""
    builder = TreeBuilder()
    try:
        _parser(builder).Parse(data, True)
        return builder.close()
    except _Refused as exc:
        fail(fmt, str(exc))
    except expat.ExpatError as exc:
        fail(fmt, f"is not well-formed XML ({exc})")
    except (ValueError, LookupError) as exc:
        fail(fmt, f"cannot be decoded as XML ({exc})")
