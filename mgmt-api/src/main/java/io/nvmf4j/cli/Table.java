package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Human-readable output: a table with a header row and columns padded to their widest cell (two spaces
 * apart, the last column not padded), or an aligned list of "key  value" lines for one object.
 */
final class Table {
    private final List<String[]> rows = new ArrayList<>();
    private final int columns;

    Table(String... header) {
        this.columns = header.length;
        rows.add(header);
    }

    Table row(Object... cells) {
        if (cells.length != columns) {
            throw new IllegalArgumentException("expected " + columns + " cells, got " + cells.length);
        }
        String[] r = new String[columns];
        for (int i = 0; i < columns; i++) {
            r[i] = text(cells[i]);
        }
        rows.add(r);
        return this;
    }

    void print(PrintWriter out) {
        int[] width = new int[columns];
        for (String[] r : rows) {
            for (int i = 0; i < columns; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < columns; i++) {
                line.append(r[i]);
                if (i < columns - 1) {
                    line.append(" ".repeat(width[i] - r[i].length() + 2));
                }
            }
            out.println(line.toString().stripTrailing());
        }
        out.flush();
    }

    /** One object as aligned "key  value" lines, in the object's field order; arrays joined with ", ". */
    static void printObject(PrintWriter out, JsonNode object) {
        int width = 0;
        for (Map.Entry<String, JsonNode> e : fields(object)) {
            width = Math.max(width, e.getKey().length());
        }
        for (Map.Entry<String, JsonNode> e : fields(object)) {
            out.println((e.getKey() + " ".repeat(width - e.getKey().length() + 2) + text(e.getValue())).stripTrailing());
        }
        out.flush();
    }

    private static List<Map.Entry<String, JsonNode>> fields(JsonNode object) {
        List<Map.Entry<String, JsonNode>> l = new ArrayList<>();
        object.fields().forEachRemaining(l::add);
        return l;
    }

    /** A cell: "-" for absent or null, arrays joined with ", ", objects and scalars as text. */
    static String text(Object cell) {
        if (cell == null) {
            return "-";
        }
        if (cell instanceof JsonNode n) {
            if (n.isNull() || n.isMissingNode()) {
                return "-";
            }
            if (n.isArray()) {
                if (n.isEmpty()) {
                    return "-";
                }
                List<String> parts = new ArrayList<>();
                n.forEach(e -> parts.add(text(e)));
                return String.join(", ", parts);
            }
            if (n.isObject()) {
                return n.toString();
            }
            return n.asText();
        }
        return cell.toString();
    }

    /** Bytes as a binary-prefixed size: 512 B, 1 MiB, 1.5 GiB. */
    static String size(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        if (u == 0 || v == Math.rint(v)) {
            return (long) v + " " + units[u];
        }
        return String.format(java.util.Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
