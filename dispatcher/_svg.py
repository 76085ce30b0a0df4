"""The little SVG the CLI's pictures need, built with xml.etree (no plotting library).

Numbers are written with two decimals at most, so that a picture made twice
from the same data is the same file.
"""
from __future__ import annotations

import argparse
import os
import sys
import xml.etree.ElementTree as ET
from typing import Union

__all__ = ["FONT", "Element", "child", "document", "output_path", "text", "write"]

SVG_NAMESPACE = "http://www.w3.org/2000/svg"
FONT = "Helvetica, Arial, sans-serif"
Element = ET.Element
Value = Union[str, int, float]


def _attribute(value: Value) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return str(value)


def child(parent: ET.Element, tag: str, **attributes: Value) -> ET.Element:
    """A new element under ``parent``; ``font_size`` is written ``font-size``."""
    return ET.SubElement(parent, tag, {name.replace("_", "-"): _attribute(v) for name, v in attributes.items()})


def text(parent: ET.Element, x: float, y: float, content: str, **attributes: Value) -> ET.Element:
    element = child(parent, "text", x=x, y=y, **attributes)
    element.text = content
    return element


def document(width: float, height: float, title: str) -> ET.Element:
    """An empty picture of ``width`` x ``height`` on white, titled ``title``."""
    root = ET.Element("svg", {"xmlns": SVG_NAMESPACE, "width": _attribute(width), "height": _attribute(height),
                              "viewBox": f"0 0 {_attribute(width)} {_attribute(height)}",
                              "font-family": FONT})
    ET.SubElement(root, "title").text = title
    child(root, "rect", width="100%", height="100%", fill="white")
    return root


def write(root: ET.Element, path: str) -> None:
    """Write the picture to ``path`` ("-": standard output)."""
    ET.indent(root)
    data = ET.tostring(root, encoding="unicode") + "\n"
    if path == "-":
        sys.stdout.write(data)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(data)


def output_path(path: str) -> str:
    """An argparse type for a picture's file: its folder must exist, so that
    a run fails at once rather than after its work ("-": standard output)."""
    if path == "-":
        return path
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"cannot write {path}: no folder {folder}")
    if os.path.isdir(path) or not os.access(path if os.path.exists(path) else folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {path}: it is a folder or not writable")
    return path
