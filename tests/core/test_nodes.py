"""The node classes: frozen, and the parser's fast constructor builds exactly what __init__ builds."""

import dataclasses

import pytest

import zonemark
from zonemark.core.nodes import Block, Connection, Heading, ListItem, Paragraph, Quote, Rule, fast_constructor


@pytest.mark.parametrize("cls", [Block, Heading, Paragraph, ListItem])
def test_fast_constructor_equals_init(cls):
    names = [f.name for f in dataclasses.fields(cls)]
    values = [f"v{i}" for i in range(len(names))]
    fast = fast_constructor(cls)(*values)
    slow = cls(*values)
    assert type(fast) is cls
    assert [getattr(fast, n) for n in names] == [getattr(slow, n) for n in names] == values
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(fast, names[0], "changed")
    with pytest.raises(TypeError):
        fast_constructor(cls)(*values[:-1])


def test_parsed_nodes_are_frozen_and_complete():
    doc = zonemark.parse("# M [external_memory]\n\n[P1]\n## TOPIC: T\n[/P1]\n[P4]\n###### LOG: 2026-01-01 — a\n"
                         "* x\n\ntext\n[/P4]\n")
    for block in doc.walk():
        for f in dataclasses.fields(block):
            getattr(block, f.name)  # every slot is set
        with pytest.raises(dataclasses.FrozenInstanceError):
            block.line = 0


@pytest.mark.parametrize("cls", [Quote, Rule, Connection])
def test_fast_constructor_of_other_field_counts_equals_init(cls):
    names = [f.name for f in dataclasses.fields(cls)]
    values = [f"v{i}" for i in range(len(names))]
    fast = fast_constructor(cls)(*values)
    assert type(fast) is cls
    assert [getattr(fast, n) for n in names] == [getattr(cls(*values), n) for n in names] == values
    with pytest.raises(TypeError):
        fast_constructor(cls)(*values[:-1])
