package io.nvmf4j.rdma;

import java.util.HashMap;
import java.util.Map;

/**
 * Struct sizes, field offsets and constants as the loaded library was compiled with them,
 * read once from {@link Native#layout()} ({@code key=value} lines). Nothing here is typed in:
 * a key the library does not export fails class initialisation with its name.
 *
 * <p>Touch this class only after {@link Rdma#ensureLibraryLoaded()}.
 */
final class Layout {
    private static final Map<String, Long> VALUES = parse(loadedLayout());

    private Layout() {
    }

    private static String loadedLayout() {
        Rdma.ensureLibraryLoaded();
        return Native.layout();
    }

    static Map<String, Long> parse(String text) {
        Map<String, Long> values = new HashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                values.put(line.substring(0, eq), Long.parseLong(line.substring(eq + 1)));
            }
        }
        return values;
    }

    /** The value exported under {@code key}. */
    static long value(String key) {
        Long v = VALUES.get(key);
        if (v == null) {
            throw new IllegalStateException("libnvmf4j_rdma exports no layout key " + key);
        }
        return v;
    }

    static int intValue(String key) {
        return Math.toIntExact(value(key));
    }

    /** Every exported key and value, for diagnostics and tests. */
    static Map<String, Long> all() {
        return Map.copyOf(VALUES);
    }
}
