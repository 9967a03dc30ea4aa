// SPDX-License-Identifier: Apache-2.0
// Build-time tool: renders an SVG file to a square PNG of the given size, so the icon's PNGs are
// made from the one SVG in the tree instead of being kept as binaries.
//   renderpng <input.svg> <size> <output.png>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>

#include <cstdio>

int main(int argc, char *argv[])
{
    // Rendering needs no display; the offscreen platform keeps the tool usable on build hosts.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    const QStringList args = app.arguments();
    bool sizeOk = false;
    const int size = args.value(2).toInt(&sizeOk);
    if (args.size() != 4 || !sizeOk || size < 1 || size > 4096) {
        std::fprintf(stderr, "usage: renderpng <input.svg> <size 1-4096> <output.png>\n");
        return 2;
    }
    QSvgRenderer renderer(args.at(1));
    if (!renderer.isValid()) {
        std::fprintf(stderr, "renderpng: %s is not a readable SVG file\n", qPrintable(args.at(1)));
        return 1;
    }
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    renderer.render(&painter);
    painter.end();
    if (!image.save(args.at(3), "PNG")) {
        std::fprintf(stderr, "renderpng: cannot write %s\n", qPrintable(args.at(3)));
        return 1;
    }
    return 0;
}
