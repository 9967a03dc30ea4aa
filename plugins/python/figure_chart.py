# SPDX-License-Identifier: Apache-2.0
"""The data of a matplotlib figure, for replhost's application/vnd.replhost.chart+json.

Follows E2B's chart model field for field, so that an agent can read a chart instead of looking
at its PNG: every chart has `type`, `title` and `elements`; 2D charts (line, scatter, bar,
box_and_whisker) add `x_label`, `y_label`, `x_unit`, `y_unit`; line and scatter add the ticks,
tick labels and scales of both axes. A figure of several axes is a `superchart` whose elements
are the charts of its axes. The type is chosen by the kinds of artists on an axes.

The Python driver executes this file from its source when it first shows a figure (no bytecode
cache is written beside it) and calls figure_chart(). Only matplotlib, which made the figure, is
imported.
"""

import datetime
import math
import re

# A unit is what a label says in "(…)" after a space, or in "[…]": "Speed (m/s)", "Time [s]".
_UNIT_RE = re.compile(r"\s\((.*?)\)|\[(.*?)\]")


def figure_chart(fig):
    """The chart of `fig` as a JSON-ready dict, or None for a figure without axes."""
    axes = fig.get_axes()
    if not axes:
        return None
    if len(axes) > 1:
        suptitle = getattr(fig, "_suptitle", None)
        title = suptitle.get_text() if suptitle is not None else ""
        return {"type": "superchart", "title": title or None,
                "elements": [_axes_chart(ax) for ax in axes]}
    return _axes_chart(axes[0])


def _axes_chart(ax):
    kind = _chart_type(ax)
    chart = {"type": kind, "title": ax.get_title() or None}
    if kind == "pie":
        chart["elements"] = _pie_elements(ax)
        return chart
    if kind == "unknown":
        chart["elements"] = []
        return chart
    _add_labels(chart, ax)
    if kind in ("line", "scatter"):
        _add_axis(chart, "x", ax.xaxis, ax.get_xscale(), ax.get_xticks(), ax.get_xticklabels())
        _add_axis(chart, "y", ax.yaxis, ax.get_yscale(), ax.get_yticks(), ax.get_yticklabels())
        chart["elements"] = _line_elements(ax) if kind == "line" else _scatter_elements(ax)
    elif kind == "bar":
        chart["elements"] = _bar_elements(ax, chart)
    else:
        chart["elements"] = _box_elements(ax, chart)
    return chart


def _children(ax):
    from matplotlib.text import Text
    children = getattr(ax, "_children", None)
    if children is None:
        children = list(ax.lines) + list(ax.collections) + list(ax.patches)
    return [c for c in children if not isinstance(c, Text)]


def _is_reference_line(line, ax):
    """axhline/axvline and the like: drawn across the axes, not data."""
    return line.get_transform() != ax.transData and not line.get_label().startswith("_child")


def _chart_type(ax):
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import PathPatch, Rectangle, Wedge
    objects = _children(ax)
    if all(isinstance(o, Line2D) for o in objects):
        # A box plot drawn without patch_artist is lines only: its boxes are closed rectangles.
        if objects and _box_outlines(ax, objects):
            return "box_and_whisker"
        return "line"
    if all(isinstance(o, (PathPatch, Line2D)) for o in objects):
        return "box_and_whisker"
    objects = [o for o in objects if not (isinstance(o, Line2D) and _is_reference_line(o, ax))]
    if all(isinstance(o, PathCollection) for o in objects):
        return "scatter"
    if all(isinstance(o, Wedge) for o in objects):
        return "pie"
    if all(isinstance(o, Rectangle) for o in objects):
        return "bar"
    return "unknown"


def _add_labels(chart, ax):
    for axis, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())):
        chart[axis + "_label"] = label or None
        unit = None
        if label:
            match = _UNIT_RE.search(label)
            if match:
                unit = match.group(1) if match.group(1) is not None else match.group(2)
        chart[axis + "_unit"] = unit


def _swap_axes(chart):
    chart["x_label"], chart["y_label"] = chart["y_label"], chart["x_label"]
    chart["x_unit"], chart["y_unit"] = chart["y_unit"], chart["x_unit"]


def _is_date_axis(axis):
    import matplotlib.dates as mdates
    converter = getattr(axis, "converter", None)
    if converter is None and hasattr(axis, "get_converter"):
        converter = axis.get_converter()
    kinds = tuple(k for k in (getattr(mdates, "DateConverter", None),
                              getattr(mdates, "ConciseDateConverter", None),
                              getattr(mdates, "_SwitchableDateConverter", None)) if k)
    if kinds and isinstance(converter, kinds):
        return True
    formatter = axis.get_major_formatter()
    return isinstance(formatter, (mdates.DateFormatter, mdates.AutoDateFormatter,
                                  mdates.ConciseDateFormatter))


def _is_category_axis(axis):
    try:
        from matplotlib.category import StrCategoryConverter
    except ImportError:
        return False
    converter = getattr(axis, "converter", None)
    if converter is None and hasattr(axis, "get_converter"):
        converter = axis.get_converter()
    return isinstance(converter, StrCategoryConverter)


def _add_axis(chart, name, axis, scale, ticks, labels):
    labels = [label.get_text() for label in labels]
    dates = _is_date_axis(axis)
    if dates:
        import matplotlib.dates as mdates
        values = [mdates.num2date(t).isoformat() for t in ticks]
        scale = "datetime"
    else:
        values = [_number(t) for t in ticks]
        if scale == "linear" and (_is_category_axis(axis) or _looks_categorical(values, labels)):
            scale = "categorical"
    chart[name + "_ticks"] = values
    chart[name + "_tick_labels"] = labels
    chart[name + "_scale"] = scale


def _looks_categorical(ticks, labels):
    """Ticks 0, 1, 2, … whose labels are not those numbers: categories on a linear axis."""
    if not ticks or len(ticks) != len(labels):
        return False
    return all(t == i and labels[i] != str(i) and labels[i] for i, t in enumerate(ticks))


def _number(value):
    try:
        f = float(value)
    except (TypeError, ValueError):
        return _point(value)
    return f if math.isfinite(f) else None


def _point(value):
    """A data coordinate as JSON: numbers as numbers, dates in ISO 8601, the rest as text."""
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    type_name = type(value).__name__
    if type_name == "datetime64":
        return str(value.astype("datetime64[s]"))
    if type_name == "Timestamp":
        return value.isoformat()
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return value
    try:
        f = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f if math.isfinite(f) else None


def _line_elements(ax):
    elements = []
    for line in ax.get_lines():
        if _is_reference_line(line, ax):
            continue
        label = line.get_label()
        if label.startswith("_child"):
            label = "Line %s" % label[len("_child"):]
        points = [[_point(x), _point(y)] for x, y in zip(line.get_xdata(), line.get_ydata())]
        elements.append({"label": label, "points": points})
    return elements


def _scatter_elements(ax):
    elements = []
    for collection in ax.collections:
        points = [[_point(x), _point(y)] for x, y in collection.get_offsets()]
        elements.append({"label": collection.get_label(), "points": points})
    return elements


def _tick_label_at(position, ticks, labels, fallback):
    for tick, label in zip(ticks, labels):
        if abs(tick - position) < 1e-9 * max(1.0, abs(tick)):
            return label.get_text()
    return fallback


def _bar_elements(ax, chart):
    from matplotlib.container import BarContainer
    elements = []
    swapped = False
    for container in ax.containers:
        if not isinstance(container, BarContainer):
            continue
        group = container.get_label()
        if group.startswith("_container"):
            group = "Group %s" % group[len("_container"):]
        rects = list(container)
        orientation = getattr(container, "orientation", None)
        if orientation is None:
            heights = [r.get_height() for r in rects]
            orientation = "horizontal" if len(set(heights)) == 1 and len(rects) > 1 else "vertical"
        if orientation == "horizontal":
            # barh: the categories are on the y axis and the values along x.
            if not swapped:
                _swap_axes(chart)
                swapped = True
            ticks, labels = ax.get_yticks(), ax.get_yticklabels()
            for i, r in enumerate(rects):
                label = _tick_label_at(r.get_y() + r.get_height() / 2, ticks, labels,
                                       labels[i].get_text() if i < len(labels) else str(i))
                elements.append({"label": label, "group": group, "value": _number(r.get_width())})
        else:
            ticks, labels = ax.get_xticks(), ax.get_xticklabels()
            for i, r in enumerate(rects):
                label = _tick_label_at(r.get_x() + r.get_width() / 2, ticks, labels,
                                       labels[i].get_text() if i < len(labels) else str(i))
                elements.append({"label": label, "group": group, "value": _number(r.get_height())})
    return elements


def _rectangle(xs, ys):
    """(x0, x1, y0, y1) when the points outline an axis-aligned rectangle, else None."""
    if len(xs) != 5 or xs[0] != xs[-1] or ys[0] != ys[-1]:
        return None
    if len(set(xs)) != 2 or len(set(ys)) != 2:
        return None
    return min(xs), max(xs), min(ys), max(ys)


def _box_outlines(ax, lines=None):
    boxes = []
    for line in ax.lines if lines is None else lines:
        try:
            xs = [float(x) for x in line.get_xdata()]
            ys = [float(y) for y in line.get_ydata()]
        except (TypeError, ValueError):
            continue
        r = _rectangle(xs, ys)
        if r is not None:
            boxes.append((line, r))
    return boxes


def _box_elements(ax, chart):
    from matplotlib.patches import PathPatch
    outlines = []
    for patch in ax.patches:
        if isinstance(patch, PathPatch):
            v = patch.get_path().vertices
            xs, ys = [float(x) for x in v[:, 0]], [float(y) for y in v[:, 1]]
            outlines.append((patch, (min(xs), max(xs), min(ys), max(ys))))
    if not outlines:
        outlines = _box_outlines(ax)
    if not outlines:
        return []
    outline_artists = {id(a) for a, _ in outlines}
    others = [line for line in ax.lines if id(line) not in outline_artists]
    vertical = _values_go_up(outlines, others)
    if not vertical:
        _swap_axes(chart)
    ticks, labels = (ax.get_xticks(), ax.get_xticklabels()) if vertical \
        else (ax.get_yticks(), ax.get_yticklabels())
    boxes = []
    for i, (_, (x0, x1, y0, y1)) in enumerate(outlines):
        lo, hi, q1, q3 = (x0, x1, y0, y1) if vertical else (y0, y1, x0, x1)
        boxes.append({"lo": lo, "hi": hi, "label": _tick_label_at(
            (lo + hi) / 2, ticks, labels, labels[i].get_text() if i < len(labels) else str(i)),
            "first_quartile": q1, "third_quartile": q3, "median": None,
            "min": q1, "max": q3, "outliers": []})
    for line in others:
        try:
            xs = [float(x) for x in line.get_xdata()]
            ys = [float(y) for y in line.get_ydata()]
        except (TypeError, ValueError):
            continue
        across, along = (xs, ys) if vertical else (ys, xs)
        if not across:
            continue
        box = _box_at(boxes, across)
        if box is None:
            continue
        marker_only = line.get_linestyle() in ("None", "none", "", " ")
        if marker_only:
            box["outliers"].extend(v for v in along if math.isfinite(v))
        elif len(along) == 2 and along[0] == along[1]:
            # A median spans the box; a cap spans less of it and sits beyond the quartiles.
            if box["first_quartile"] <= along[0] <= box["third_quartile"] \
                    and abs((max(across) - min(across)) - (box["hi"] - box["lo"])) < 1e-9:
                box["median"] = along[0]
        elif len(along) == 2 and across[0] == across[1]:
            low, high = min(along), max(along)
            if high <= box["first_quartile"]:
                box["min"] = min(box["min"], low)
            elif low >= box["third_quartile"]:
                box["max"] = max(box["max"], high)
    return [{"label": b["label"], "min": b["min"], "first_quartile": b["first_quartile"],
             "median": b["median"], "third_quartile": b["third_quartile"], "max": b["max"],
             "outliers": b["outliers"]} for b in boxes]


def _values_go_up(outlines, lines):
    """Whether the boxes are upright (values along y): their whiskers leave the box ends along
    the value axis. Without whiskers, boxes are taken as upright, matplotlib's default."""
    for line in lines:
        try:
            xs = [float(x) for x in line.get_xdata()]
            ys = [float(y) for y in line.get_ydata()]
        except (TypeError, ValueError):
            continue
        if len(xs) != 2:
            continue
        for _, (x0, x1, y0, y1) in outlines:
            if xs[0] == xs[1] and x0 < xs[0] < x1 and (min(ys) == y1 or max(ys) == y0):
                return True
            if ys[0] == ys[1] and y0 < ys[0] < y1 and (min(xs) == x1 or max(xs) == x0):
                return False
    return True


def _box_at(boxes, across):
    lo, hi = min(across), max(across)
    for box in boxes:
        if box["lo"] - 1e-9 <= lo and hi <= box["hi"] + 1e-9:
            return box
    return None


def _pie_elements(ax):
    elements = []
    for wedge in ax.patches:
        angle = abs(round(float(wedge.theta2) - float(wedge.theta1), 9))
        elements.append({"label": wedge.get_label(), "angle": angle,
                         "radius": _number(wedge.r)})
    return elements
