package io.nvmf4j.config;

/**
 * The one encoder for text that came from the network (a Connect's NQNs, a TLS PSK identity) or from the management
 * API (a path parameter, a field of a body, a refusal built from them) before it goes into a log line: with it, a CR
 * or LF in such text cannot start a forged line, and a control character cannot rewrite what a terminal shows.
 * Every log line that carries such text passes it through {@link #escape}; text that the target wrote itself (a
 * number, an address it printed) needs none.
 */
public final class LogText {
    private LogText() {
    }

    /**
     * {@code text} safe for one log line: backslash and double quote get a backslash, CR, LF and TAB become
     * {@code \r \n \t}, a space stays, and every other control or line-breaking character (C0, DEL, C1, U+2028,
     * U+2029) becomes a backslash, {@code u} and four hex digits; null stays null.
     */
    public static String escape(String text) {
        if (text == null) {
            return null;
        }
        StringBuilder b = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            String r = switch (c) {
                case '\\' -> "\\\\";
                case '"' -> "\\\"";
                case '\r' -> "\\r";
                case '\n' -> "\\n";
                case '\t' -> "\\t";
                default -> isControl(c) || c == 0x2028 || c == 0x2029 ? String.format("\\u%04x", (int) c) : null;
            };
            if (r != null && b == null) {
                b = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (b != null) {
                if (r != null) {
                    b.append(r);
                } else {
                    b.append(c);
                }
            }
        }
        return b == null ? text : b.toString();
    }

    /** {@code text} escaped and in double quotes, so that it cannot pose as the words after it. */
    public static String quoted(String text) {
        return text == null ? null : "\"" + escape(text) + "\"";
    }

    /** Whether {@code c} is a C0 (0x00..0x1F) or C1 (0x80..0x9F) control character or DEL (0x7F). */
    public static boolean isControl(char c) {
        return c < 0x20 || (c >= 0x7F && c <= 0x9F);
    }

    /** The index of the first C0, DEL or C1 character of {@code text}, -1 when it has none. */
    public static int firstControl(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (isControl(text.charAt(i))) {
                return i;
            }
        }
        return -1;
    }
}
