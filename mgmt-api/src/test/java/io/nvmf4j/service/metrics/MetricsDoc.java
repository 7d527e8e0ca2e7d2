package io.nvmf4j.service.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The "Meters" table of docs/metrics.md (name, type, engines, ...) against the meter families of a scrape:
 * what one engine publishes that the table does not list, and what the table lists for it that is not published.
 */
final class MetricsDoc {
    static final Path FILE = Path.of("..", "docs", "metrics.md");
    private static final Pattern NAME = Pattern.compile("`([a-z0-9_]+)(\\*?)`");
    private static final Pattern TYPE = Pattern.compile("^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\\w+)$", Pattern.MULTILINE);

    /** Exact family names by engine, and name prefixes ({@code jvm_*}) by engine. */
    private final Map<String, Set<String>> names = new HashMap<>();
    private final Map<String, Set<String>> prefixes = new HashMap<>();

    private MetricsDoc() {
    }

    static MetricsDoc load() throws IOException {
        MetricsDoc d = new MetricsDoc();
        List<String> lines = Files.readAllLines(FILE);
        int at = lines.indexOf("## Meters");
        if (at < 0) {
            throw new IllegalStateException(FILE + " has no '## Meters' section");
        }
        for (int i = at + 1; i < lines.size() && !lines.get(i).startsWith("## "); i++) {
            String line = lines.get(i);
            if (!line.startsWith("| `")) {
                continue;
            }
            String[] cells = line.split("\\|");
            // cells[0] is empty (the leading '|'): 1 name, 2 type, 3 engines
            for (String engine : cells[3].split(",")) {
                Matcher m = NAME.matcher(cells[1]);
                while (m.find()) {
                    Map<String, Set<String>> into = m.group(2).isEmpty() ? d.names : d.prefixes;
                    into.computeIfAbsent(engine.trim(), k -> new TreeSet<>()).add(m.group(1));
                }
            }
        }
        return d;
    }

    /**
     * Meter families of a Prometheus text scrape, from its {@code # TYPE} lines; a timer's {@code _max} gauge
     * belongs to its histogram's family.
     */
    static Set<String> families(String scrape) {
        Map<String, String> types = new HashMap<>();
        Matcher m = TYPE.matcher(scrape);
        while (m.find()) {
            types.put(m.group(1), m.group(2));
        }
        Set<String> out = new TreeSet<>();
        for (Map.Entry<String, String> e : types.entrySet()) {
            String n = e.getKey();
            if (n.endsWith("_max") && "histogram".equals(types.get(n.substring(0, n.length() - 4)))) {
                continue;
            }
            out.add(n);
        }
        return out;
    }

    /** Families in the scrape that the table does not list for {@code engine}. */
    List<String> undocumented(String engine, Set<String> scraped) {
        Set<String> exact = names.getOrDefault(engine, Set.of());
        Set<String> pre = prefixes.getOrDefault(engine, Set.of());
        List<String> out = new ArrayList<>();
        for (String f : scraped) {
            if (!exact.contains(f) && pre.stream().noneMatch(f::startsWith)) {
                out.add(f);
            }
        }
        return out;
    }

    /** Names (and prefixes) the table lists for {@code engine} that the scrape does not have. */
    List<String> unpublished(String engine, Set<String> scraped) {
        List<String> out = new ArrayList<>();
        for (String n : names.getOrDefault(engine, Set.of())) {
            if (!scraped.contains(n)) {
                out.add(n);
            }
        }
        for (String p : prefixes.getOrDefault(engine, Set.of())) {
            if (scraped.stream().noneMatch(f -> f.startsWith(p))) {
                out.add(p + "*");
            }
        }
        return out;
    }

    /** Everything listed for {@code engine} (for a sanity check that the table was read). */
    int count(String engine) {
        return names.getOrDefault(engine, Set.of()).size();
    }
}
