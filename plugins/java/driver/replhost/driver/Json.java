// SPDX-License-Identifier: Apache-2.0
package replhost.driver;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the protocol needs, so the driver depends on nothing but the JDK.
 *
 * <p>Objects are {@code Map<String, Object>} (insertion-ordered), arrays {@code List<Object>},
 * numbers {@code Long} when integral and in range, else {@code Double}.
 */
final class Json {
    private Json() {
    }

    static final class ParseException extends Exception {
        private static final long serialVersionUID = 1L;

        ParseException(String message, int at) {
            super(message + " at offset " + at);
        }
    }

    static Object parse(String text) throws ParseException {
        Parser p = new Parser(text);
        p.skipSpace();
        Object value = p.value(0);
        p.skipSpace();
        if (p.pos != text.length())
            throw new ParseException("trailing characters", p.pos);
        return value;
    }

    private static final class Parser {
        // Requests are small and flat; the limit only keeps a hostile frame from exhausting the
        // stack.
        private static final int MAX_DEPTH = 512;
        final String s;
        int pos;

        Parser(String s) {
            this.s = s;
        }

        void skipSpace() {
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
                    break;
                pos++;
            }
        }

        ParseException error(String message) {
            return new ParseException(message, pos);
        }

        Object value(int depth) throws ParseException {
            if (depth > MAX_DEPTH)
                throw error("nested too deeply");
            if (pos >= s.length())
                throw error("unexpected end");
            char c = s.charAt(pos);
            switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                literal("true");
                return Boolean.TRUE;
            case 'f':
                literal("false");
                return Boolean.FALSE;
            case 'n':
                literal("null");
                return null;
            default:
                if (c == '-' || (c >= '0' && c <= '9'))
                    return number();
                throw error("unexpected character");
            }
        }

        void literal(String word) throws ParseException {
            if (!s.startsWith(word, pos))
                throw error("bad literal");
            pos += word.length();
        }

        Map<String, Object> object(int depth) throws ParseException {
            Map<String, Object> map = new LinkedHashMap<>();
            pos++;
            skipSpace();
            if (pos < s.length() && s.charAt(pos) == '}') {
                pos++;
                return map;
            }
            while (true) {
                skipSpace();
                if (pos >= s.length() || s.charAt(pos) != '"')
                    throw error("expected a key");
                String key = string();
                skipSpace();
                if (pos >= s.length() || s.charAt(pos) != ':')
                    throw error("expected ':'");
                pos++;
                skipSpace();
                map.put(key, value(depth + 1));
                skipSpace();
                if (pos >= s.length())
                    throw error("unexpected end");
                char c = s.charAt(pos++);
                if (c == '}')
                    return map;
                if (c != ',')
                    throw error("expected ',' or '}'");
            }
        }

        List<Object> array(int depth) throws ParseException {
            List<Object> list = new ArrayList<>();
            pos++;
            skipSpace();
            if (pos < s.length() && s.charAt(pos) == ']') {
                pos++;
                return list;
            }
            while (true) {
                skipSpace();
                list.add(value(depth + 1));
                skipSpace();
                if (pos >= s.length())
                    throw error("unexpected end");
                char c = s.charAt(pos++);
                if (c == ']')
                    return list;
                if (c != ',')
                    throw error("expected ',' or ']'");
            }
        }

        String string() throws ParseException {
            pos++; // opening quote
            StringBuilder out = null;
            int runStart = pos;
            while (true) {
                if (pos >= s.length())
                    throw error("unterminated string");
                char c = s.charAt(pos);
                if (c == '"') {
                    String tail = s.substring(runStart, pos++);
                    return out == null ? tail : out.append(tail).toString();
                }
                if (c < 0x20)
                    throw error("control character in string");
                if (c != '\\') {
                    pos++;
                    continue;
                }
                if (out == null)
                    out = new StringBuilder();
                out.append(s, runStart, pos);
                pos++;
                if (pos >= s.length())
                    throw error("unterminated escape");
                char e = s.charAt(pos++);
                switch (e) {
                case '"': out.append('"'); break;
                case '\\': out.append('\\'); break;
                case '/': out.append('/'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u':
                    if (pos + 4 > s.length())
                        throw error("short \\u escape");
                    int code = 0;
                    for (int i = 0; i < 4; i++) {
                        int d = Character.digit(s.charAt(pos++), 16);
                        if (d < 0)
                            throw error("bad \\u escape");
                        code = code * 16 + d;
                    }
                    // Surrogate pairs arrive as two escapes; appending the halves in order
                    // rebuilds the character.
                    out.append((char) code);
                    break;
                default:
                    throw error("bad escape");
                }
                runStart = pos;
            }
        }

        Object number() throws ParseException {
            int start = pos;
            if (s.charAt(pos) == '-')
                pos++;
            boolean integral = true;
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c >= '0' && c <= '9') {
                    pos++;
                } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                    integral = false;
                    pos++;
                } else {
                    break;
                }
            }
            String text = s.substring(start, pos);
            try {
                if (integral) {
                    try {
                        return Long.parseLong(text);
                    } catch (NumberFormatException tooBig) {
                        return Double.parseDouble(text);
                    }
                }
                return Double.parseDouble(text);
            } catch (NumberFormatException e) {
                throw error("bad number");
            }
        }
    }

    static String write(Object value) {
        StringBuilder out = new StringBuilder(128);
        write(value, out, 0);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out, int depth) {
        if (depth > 256) {
            // Only user data (application/json) can nest like this.
            out.append("null");
            return;
        }
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            string((String) value, out);
        } else if (value instanceof Boolean) {
            out.append(((Boolean) value).booleanValue() ? "true" : "false");
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d))
                out.append("null");
            else if (d == Math.rint(d) && Math.abs(d) < 1e15)
                out.append((long) d);
            else
                out.append(d);
        } else if (value instanceof Number) {
            out.append(value.toString());
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
                if (!first)
                    out.append(',');
                first = false;
                string(String.valueOf(e.getKey()), out);
                out.append(':');
                write(e.getValue(), out, depth + 1);
            }
            out.append('}');
        } else if (value instanceof Iterable) {
            out.append('[');
            boolean first = true;
            for (Object item : (Iterable<?>) value) {
                if (!first)
                    out.append(',');
                first = false;
                write(item, out, depth + 1);
            }
            out.append(']');
        } else if (value.getClass().isArray()) {
            out.append('[');
            int n = java.lang.reflect.Array.getLength(value);
            for (int i = 0; i < n; i++) {
                if (i > 0)
                    out.append(',');
                write(java.lang.reflect.Array.get(value, i), out, depth + 1);
            }
            out.append(']');
        } else if (value instanceof Character) {
            string(value.toString(), out);
        } else {
            string(String.valueOf(value), out);
        }
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    // Output is UTF-8, so only what JSON requires is escaped. A lone surrogate cannot be encoded
    // in UTF-8 and would turn into '?', so it becomes U+FFFD explicitly.
    static void string(String s, StringBuilder out) {
        out.append('"');
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            switch (c) {
            case '"': out.append("\\\""); break;
            case '\\': out.append("\\\\"); break;
            case '\n': out.append("\\n"); break;
            case '\r': out.append("\\r"); break;
            case '\t': out.append("\\t"); break;
            case '\b': out.append("\\b"); break;
            case '\f': out.append("\\f"); break;
            default:
                if (c < 0x20) {
                    out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 15]);
                } else if (Character.isHighSurrogate(c)) {
                    if (i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                        out.append(c).append(s.charAt(++i));
                    } else {
                        out.append('\ufffd');
                    }
                } else if (Character.isLowSurrogate(c)) {
                    out.append('\ufffd');
                } else {
                    out.append(c);
                }
            }
        }
        out.append('"');
    }
}
