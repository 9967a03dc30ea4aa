# SPDX-License-Identifier: Apache-2.0
"""IPython.display for interpreters without IPython, provided by replhost's Python driver.

The driver makes this module `IPython.display`, `IPython.core.display` and
`IPython.core.display_functions` when the interpreter has no IPython of its own (an installed
IPython is always found first and used instead). It has IPython's names and their behaviour
where a notebook's code or a library relies on it: rich objects are shown through the driver's
display(), which honours `_repr_*_` and `_repr_mimebundle_`, display ids and updates, and
clear_output(). The driver binds it with _bind() before any code imports it; it is executed from
its source, so no bytecode cache is ever written beside it.
"""

import json as _json
import os
import struct

__all__ = [
    "display", "update_display", "clear_output", "publish_display_data", "DisplayHandle",
    "DisplayObject", "TextDisplayObject", "Pretty", "HTML", "Markdown", "Math", "Latex", "SVG",
    "JSON", "Javascript", "Image", "Code", "IFrame", "FileLink",
    "display_pretty", "display_html", "display_markdown", "display_latex", "display_svg",
    "display_json", "display_javascript", "display_png", "display_jpeg", "display_pdf",
]

_display = None
_clear = None


def _bind(display_function, clear_function, handle_class):
    """Called by the driver: the functions that emit replhost's display events."""
    global _display, _clear, DisplayHandle
    _display = display_function
    _clear = clear_function
    DisplayHandle = handle_class
    DisplayHandle.__module__ = __name__


class DisplayHandle(object):
    """Replaced by the driver's handle class in _bind()."""


def display(*objs, **kwargs):
    """Shows each object with its richest representations (IPython's display())."""
    return _display(*objs, **kwargs)


def update_display(obj, *, display_id, **kwargs):
    """Replaces the display with `display_id` by `obj`."""
    kwargs["update"] = True
    _display(obj, display_id=display_id, **kwargs)


def clear_output(wait=False):
    """Clears the cell's output; with wait=True, once new output replaces it."""
    _clear(wait)


def publish_display_data(data, metadata=None, source=None, *, transient=None, **kwargs):
    """Shows a ready MIME bundle."""
    _display(data, raw=True, metadata=metadata, transient=transient, **kwargs)


def _display_mimetype(mimetype, objs, raw=False, metadata=None):
    if metadata:
        metadata = {mimetype: metadata}
    if raw:
        for obj in objs:
            publish_display_data({mimetype: obj}, metadata)
    else:
        for obj in objs:
            _display(obj, metadata=metadata)


def display_pretty(*objs, **kwargs):
    _display_mimetype("text/plain", objs, **kwargs)


def display_html(*objs, **kwargs):
    _display_mimetype("text/html", objs, **kwargs)


def display_markdown(*objs, **kwargs):
    _display_mimetype("text/markdown", objs, **kwargs)


def display_svg(*objs, **kwargs):
    _display_mimetype("image/svg+xml", objs, **kwargs)


def display_png(*objs, **kwargs):
    _display_mimetype("image/png", objs, **kwargs)


def display_jpeg(*objs, **kwargs):
    _display_mimetype("image/jpeg", objs, **kwargs)


def display_latex(*objs, **kwargs):
    _display_mimetype("text/latex", objs, **kwargs)


def display_json(*objs, **kwargs):
    _display_mimetype("application/json", objs, **kwargs)


def display_javascript(*objs, **kwargs):
    _display_mimetype("application/javascript", objs, **kwargs)


def display_pdf(*objs, **kwargs):
    _display_mimetype("application/pdf", objs, **kwargs)


def _read(filename, binary):
    with open(filename, "rb" if binary else "r", **({} if binary else {"encoding": "utf-8"})) as f:
        return f.read()


class DisplayObject(object):
    """An object shown by its data: given, or read from a file."""

    _read_flags = "r"

    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if isinstance(data, (os.PathLike, str)) and filename is None and url is None:
            text = os.fspath(data)
            if text.startswith(("http://", "https://")):
                url, data = text, None
            elif not isinstance(data, str) or (len(text) < 4096 and "\n" not in text
                                               and os.path.isfile(text)):
                filename, data = text, None
        self.data = data
        self.url = url
        self.filename = filename
        self.metadata = {} if metadata is None else dict(metadata)
        self.reload()
        self._check_data()

    def __repr__(self):
        if not self._show_mem_addr:
            cls = self.__class__
            return "<%s.%s object>" % (cls.__module__, cls.__name__)
        return object.__repr__(self)

    _show_mem_addr = False

    def _check_data(self):
        pass

    def _data_and_metadata(self):
        if self.metadata:
            return self.data, dict(self.metadata)
        return self.data

    def reload(self):
        """Reads the data again from the file, when there is one."""
        if self.filename is not None:
            self.data = _read(self.filename, "b" in self._read_flags)


class TextDisplayObject(DisplayObject):
    """A DisplayObject whose data is text."""

    def _check_data(self):
        if self.data is not None and not isinstance(self.data, str):
            raise TypeError("%s expects text, not %r" % (type(self).__name__, type(self.data)))


class Pretty(TextDisplayObject):
    def _repr_pretty_(self, pp, cycle):
        return pp.text(self.data)

    def __repr__(self):
        return self.data if self.data is not None else ""


class HTML(TextDisplayObject):
    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if isinstance(data, str) and data.lstrip()[:1] == "<":
            # Markup, never a file name.
            super().__init__(None, url, filename, metadata)
            self.data = data
        else:
            super().__init__(data, url, filename, metadata)

    def _repr_html_(self):
        return self._data_and_metadata()

    def __html__(self):
        return self._repr_html_()


class Markdown(TextDisplayObject):
    def _repr_markdown_(self):
        return self._data_and_metadata()


class Math(TextDisplayObject):
    def _repr_latex_(self):
        s = r"$\displaystyle %s$" % self.data.strip("$")
        return (s, self.metadata) if self.metadata else s


class Latex(TextDisplayObject):
    def _repr_latex_(self):
        return self._data_and_metadata()


class SVG(DisplayObject):
    _read_flags = "rb"

    def _check_data(self):
        if isinstance(self.data, bytes):
            self.data = self.data.decode("utf-8", "replace")

    def _repr_svg_(self):
        return self._data_and_metadata()


class JSON(DisplayObject):
    """JSON data, shown as application/json (a tree in frontends that can)."""

    def __init__(self, data=None, url=None, filename=None, expanded=False, metadata=None,
                 root="root", **kwargs):
        metadata = dict(metadata or {})
        metadata.update({"expanded": expanded, "root": root})
        if isinstance(data, str) and filename is None and url is None:
            try:
                data = _json.loads(data)
            except ValueError:
                pass
        super().__init__(data=data, url=url, filename=filename, metadata=metadata)
        if isinstance(self.data, (bytes, str)) and self.filename is not None:
            self.data = _json.loads(self.data)

    def _repr_json_(self):
        return self._data_and_metadata()


class Javascript(TextDisplayObject):
    def __init__(self, data=None, url=None, filename=None, lib=None, css=None):
        self.lib = [lib] if isinstance(lib, str) else list(lib or [])
        self.css = [css] if isinstance(css, str) else list(css or [])
        super().__init__(data=data, url=url, filename=filename)

    def _repr_javascript_(self):
        r = ""
        for c in self.css:
            r += ("var link = document.createElement('link'); link.rel = 'stylesheet'; "
                  "link.href = %s; document.head.appendChild(link);\n" % _json.dumps(c))
        for lib in self.lib:
            r += ("var script = document.createElement('script'); script.src = %s; "
                  "document.head.appendChild(script);\n" % _json.dumps(lib))
        return r + (self.data or "")


_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG = b"\xff\xd8"
_GIF = (b"GIF87a", b"GIF89a")


def _png_size(data):
    if data[:8] == _PNG and len(data) >= 24 and data[12:16] == b"IHDR":
        return struct.unpack(">ii", data[16:24])
    return None


class Image(DisplayObject):
    """An image (PNG, JPEG, GIF, WebP) from bytes, a file or a URL."""

    _read_flags = "rb"
    _FMT_MIMES = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg",
                  "gif": "image/gif", "webp": "image/webp"}

    def __init__(self, data=None, url=None, filename=None, format=None, embed=None, width=None,
                 height=None, retina=False, unconfined=False, metadata=None, alt=None):
        if isinstance(data, bytes) and filename is None and url is None:
            super().__init__(None, None, None, metadata)
            self.data = data
        else:
            super().__init__(data, url, filename, metadata)
        name = self.filename or self.url or ""
        if format is None and name:
            ext = os.path.splitext(name)[1].lower().lstrip(".")
            format = "jpeg" if ext == "jpg" else ext or None
        if format is None and isinstance(self.data, bytes):
            if self.data[:8] == _PNG:
                format = "png"
            elif self.data[:2] == _JPEG:
                format = "jpeg"
            elif self.data[:6] in _GIF:
                format = "gif"
            elif self.data[:4] == b"RIFF" and self.data[8:12] == b"WEBP":
                format = "webp"
        self.format = (format or "png").lower()
        if self.format not in self._FMT_MIMES:
            raise ValueError("Cannot embed the %r image format" % self.format)
        self.mimetype = self._FMT_MIMES[self.format]
        self.embed = embed if embed is not None else self.url is None
        self.width, self.height, self.unconfined, self.alt = width, height, unconfined, alt
        if retina and self.format == "png" and isinstance(self.data, bytes):
            size = _png_size(self.data)
            if size and width is None and height is None:
                self.width, self.height = size[0] // 2, size[1] // 2

    def _image_metadata(self):
        md = dict(self.metadata)
        if self.width:
            md["width"] = self.width
        if self.height:
            md["height"] = self.height
        if self.unconfined:
            md["unconfined"] = self.unconfined
        if self.alt:
            md["alt"] = self.alt
        return md

    def _repr_html_(self):
        if self.embed:
            return None
        attrs = ""
        if self.width:
            attrs += ' width="%d"' % self.width
        if self.height:
            attrs += ' height="%d"' % self.height
        if self.alt:
            attrs += ' alt="%s"' % self.alt.replace('"', "&quot;")
        return '<img src="%s"%s/>' % (self.url, attrs)

    def _repr_mimebundle_(self, include=None, exclude=None):
        if not self.embed or not isinstance(self.data, bytes):
            return {"text/html": self._repr_html_() or ""}, {}
        md = self._image_metadata()
        return {self.mimetype: self.data}, ({self.mimetype: md} if md else {})

    def _repr_png_(self):
        if self.embed and self.mimetype == "image/png":
            return self.data

    def _repr_jpeg_(self):
        if self.embed and self.mimetype == "image/jpeg":
            return self.data


class Code(TextDisplayObject):
    """Source code, shown as text (and as HTML in a <pre>)."""

    def __init__(self, data=None, url=None, filename=None, language=None):
        self.language = language
        super().__init__(data=data, url=url, filename=filename)

    def _repr_html_(self):
        import html
        return "<pre>%s</pre>" % html.escape(self.data or "")

    def __repr__(self):
        return self.data or ""


class IFrame(object):
    """A page embedded in an iframe."""

    def __init__(self, src, width, height, extras=None, **kwargs):
        self.src, self.width, self.height = src, width, height
        self.extras = list(extras or [])
        self.params = kwargs

    def _repr_html_(self):
        from urllib.parse import urlencode
        params = "?" + urlencode(self.params) if self.params else ""
        return ('<iframe width="%s" height="%s" src="%s%s" frameborder="0" allowfullscreen %s>'
                '</iframe>' % (self.width, self.height, self.src, params, " ".join(self.extras)))


class FileLink(object):
    """A link to a file of the workspace."""

    def __init__(self, path, url_prefix="", result_html_prefix="", result_html_suffix="<br>"):
        self.path = os.fspath(path)
        self.url_prefix = url_prefix
        self.result_html_prefix = result_html_prefix
        self.result_html_suffix = result_html_suffix

    def _repr_html_(self):
        import html
        return '%s<a href="%s" target="_blank">%s</a>%s' % (
            self.result_html_prefix, html.escape(self.url_prefix + self.path),
            html.escape(self.path), self.result_html_suffix)

    def __repr__(self):
        return os.path.abspath(self.path)


def set_matplotlib_formats(*formats, **kwargs):
    """Accepted for notebooks that call it: figures are shown as PNG (with their data)."""
