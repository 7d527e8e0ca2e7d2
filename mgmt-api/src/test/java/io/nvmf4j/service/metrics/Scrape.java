package io.nvmf4j.service.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** One Prometheus text scrape as series → value ({@code name{k="v",...}}, labels sorted by key). */
final class Scrape {
    final String text;
    private final Map<String, Double> samples = new LinkedHashMap<>();

    Scrape(String text) {
        this.text = text;
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            samples.put(normalize(line.substring(0, space)), Double.parseDouble(line.substring(space + 1)));
        }
    }

    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** {@code name{labels}} with the labels sorted by name (the exposition puts {@code le} last). */
    private static String normalize(String series) {
        int brace = series.indexOf('{');
        if (brace < 0) {
            return series;
        }
        List<String> labels = new ArrayList<>();
        Matcher m = LABEL.matcher(series.substring(brace));
        while (m.find()) {
            labels.add(m.group(1));
            labels.add(m.group(2));
        }
        return series(series.substring(0, brace), labels.toArray(new String[0]));
    }

    /** The series key for {@code name} and alternating label names and values. */
    static String series(String name, String... labels) {
        if (labels.length == 0) {
            return name;
        }
        TreeMap<String, String> sorted = new TreeMap<>();
        for (int i = 0; i < labels.length; i += 2) {
            sorted.put(labels[i], labels[i + 1]);
        }
        return name + sorted.entrySet().stream().map(e -> e.getKey() + "=\"" + e.getValue() + "\"")
            .collect(Collectors.joining(",", "{", "}"));
    }

    /** The value of a series, 0 when absent (a counter not created yet). */
    double value(String name, String... labels) {
        return samples.getOrDefault(series(name, labels), 0.0);
    }

    boolean has(String name, String... labels) {
        return samples.containsKey(series(name, labels));
    }

    /** Sample names (without labels) present in the scrape. */
    Set<String> names() {
        return samples.keySet().stream().map(s -> s.indexOf('{') < 0 ? s : s.substring(0, s.indexOf('{')))
            .collect(Collectors.toSet());
    }

    /** Series whose key contains {@code fragment}. */
    Set<String> seriesContaining(String fragment) {
        return samples.keySet().stream().filter(s -> s.contains(fragment)).collect(Collectors.toSet());
    }
}
