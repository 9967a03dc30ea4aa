// SPDX-License-Identifier: Apache-2.0
package replhost.driver;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the helper snippets every context starts with call into: {@code display(mime, data)},
 * {@code display(value)} and {@code cd(path)}. Public because snippets are compiled against it.
 */
public final class Api {
    private Api() {
    }

    /**
     * Shows {@code data} as {@code mime} in the cell's output. Text types take a String (or UTF-8
     * bytes); binary types such as image/png take the bytes, a base64 String, or (PNG, JPEG) a
     * java.awt.image.RenderedImage; application/json takes JSON text or Maps, Lists, Strings,
     * numbers and booleans.
     */
    public static void display(String mime, Object data) {
        if (mime == null || mime.isBlank() || mime.indexOf('/') <= 0)
            throw new IllegalArgumentException("display needs a MIME type such as \"text/html\" "
                    + "or \"image/png\", got " + (mime == null ? "null" : "\"" + mime + "\""));
        mime = mime.trim();
        Map<String, Object> bundle = new LinkedHashMap<>();
        Map<String, Object> metadata = new LinkedHashMap<>();
        Object converted = convert(mime, data);
        bundle.put(mime, converted);
        if (!mime.equals("text/plain")) {
            String summary = "<" + mime + ">";
            if (converted instanceof String && (mime.startsWith("image/") && !mime.equals("image/svg+xml"))) {
                byte[] raw = decodeQuietly((String) converted);
                int[] size = raw == null ? null : imageSize(mime, raw);
                if (size != null) {
                    summary = "<" + mime + " " + size[0] + "x" + size[1] + ">";
                    Map<String, Object> dims = new LinkedHashMap<>();
                    dims.put("width", size[0]);
                    dims.put("height", size[1]);
                    metadata.put(mime, dims);
                }
            }
            bundle.put("text/plain", summary);
        }
        Driver.display(bundle, metadata);
    }

    /**
     * Shows a value in the cell's output: an image (java.awt.image.RenderedImage) as PNG, anything
     * else as the text JShell would show for it.
     */
    public static void display(Object value) {
        Map<String, Object> bundle = Driver.bundleOf(value);
        Map<String, Object> metadata = new LinkedHashMap<>();
        Object png = bundle.get("image/png");
        if (png instanceof String) {
            byte[] raw = decodeQuietly((String) png);
            int[] size = raw == null ? null : imageSize("image/png", raw);
            if (size != null) {
                Map<String, Object> dims = new LinkedHashMap<>();
                dims.put("width", size[0]);
                dims.put("height", size[1]);
                metadata.put("image/png", dims);
            }
        }
        Driver.display(bundle, metadata);
    }

    /** Changes the working directory of the context (and of the child processes it starts). */
    public static void cd(String path) {
        if (path == null)
            throw new IllegalArgumentException("cd needs a directory");
        try {
            Native.chdir(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    private static boolean isText(String mime) {
        return mime.startsWith("text/") || mime.equals("image/svg+xml") || mime.endsWith("+xml")
                || mime.equals("application/javascript") || mime.equals("application/xml");
    }

    private static boolean isJson(String mime) {
        return mime.equals("application/json") || mime.endsWith("+json");
    }

    private static Object convert(String mime, Object data) {
        if (isJson(mime)) {
            if (data instanceof String) {
                try {
                    return Json.parse((String) data);
                } catch (Json.ParseException e) {
                    throw new IllegalArgumentException(mime + " data is not valid JSON: " + e.getMessage());
                }
            }
            return data;
        }
        if (isText(mime)) {
            if (data instanceof byte[])
                return new String((byte[]) data, StandardCharsets.UTF_8);
            return String.valueOf(data);
        }
        if (data instanceof byte[])
            return Base64.getEncoder().encodeToString((byte[]) data);
        if (data instanceof String) {
            String text = ((String) data).replaceAll("\\s+", "");
            try {
                Base64.getDecoder().decode(text);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(mime + " data given as a String must be base64");
            }
            return text;
        }
        if (data != null && isImage(data)) {
            String format = mime.equals("image/jpeg") ? "jpeg" : mime.equals("image/png") ? "png" : null;
            if (format == null)
                throw new IllegalArgumentException("an image can be shown as image/png or image/jpeg, not " + mime);
            return Base64.getEncoder().encodeToString(encodeImage(data, format));
        }
        throw new IllegalArgumentException(mime + " data must be a byte[] or a base64 String, got "
                + (data == null ? "null" : data.getClass().getName()));
    }

    static boolean isImage(Object value) {
        return value instanceof java.awt.image.RenderedImage;
    }

    static byte[] encodeImage(Object image, String format) {
        java.awt.image.RenderedImage img = (java.awt.image.RenderedImage) image;
        if (format.equals("jpeg") && img.getColorModel().hasAlpha()) {
            // The JPEG writer refuses images with alpha; flatten onto white.
            java.awt.image.BufferedImage rgb = new java.awt.image.BufferedImage(
                    img.getWidth(), img.getHeight(), java.awt.image.BufferedImage.TYPE_INT_RGB);
            java.awt.Graphics2D g = rgb.createGraphics();
            try {
                g.setColor(java.awt.Color.WHITE);
                g.fillRect(0, 0, img.getWidth(), img.getHeight());
                g.drawRenderedImage(img, new java.awt.geom.AffineTransform());
            } finally {
                g.dispose();
            }
            img = rgb;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            if (!javax.imageio.ImageIO.write(img, format, out))
                throw new IllegalArgumentException("no " + format + " writer for this image");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static byte[] decodeQuietly(String base64) {
        try {
            return Base64.getDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    // Width and height from a PNG's IHDR or a JPEG's SOF marker, for the display metadata.
    static int[] imageSize(String mime, byte[] b) {
        if (mime.equals("image/png") && b.length >= 24 && (b[0] & 0xff) == 0x89 && b[1] == 'P'
                && b[2] == 'N' && b[3] == 'G') {
            return new int[] {be32(b, 16), be32(b, 20)};
        }
        if (mime.equals("image/jpeg") && b.length > 4 && (b[0] & 0xff) == 0xff && (b[1] & 0xff) == 0xd8) {
            int i = 2;
            while (i + 9 < b.length) {
                if ((b[i] & 0xff) != 0xff) {
                    i++;
                    continue;
                }
                int marker = b[i + 1] & 0xff;
                int length = ((b[i + 2] & 0xff) << 8) | (b[i + 3] & 0xff);
                if (marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc) {
                    int h = ((b[i + 5] & 0xff) << 8) | (b[i + 6] & 0xff);
                    int w = ((b[i + 7] & 0xff) << 8) | (b[i + 8] & 0xff);
                    return new int[] {w, h};
                }
                i += 2 + length;
            }
        }
        return null;
    }

    private static int be32(byte[] b, int at) {
        return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
    }
}
