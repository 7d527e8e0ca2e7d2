package io.nvmf4j;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The packages of {@code io.nvmf4j} that a tree of sources names, in its import lines and fully qualified names,
 * comments left out: the seams between modules and packages are checked against it.
 */
public final class SourceReferences {
    private static final Pattern REFERENCE = Pattern.compile("\\bio\\.nvmf4j\\.(?:([a-z][a-z0-9]*)\\.|([A-Z]))");

    /** One reference: where it is and the package it names ("" for the root package). */
    public record Reference(String file, int line, String pkg, String text) {
        @Override
        public String toString() {
            return file + ":" + line + " names io.nvmf4j." + (pkg.isEmpty() ? "" : pkg + ".") + "…: " + text;
        }
    }

    private SourceReferences() {
    }

    /** Every reference to a package of io.nvmf4j in the {@code .java} files under {@code root}. */
    public static List<Reference> under(Path root) throws IOException {
        List<Reference> out = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        }
        for (Path f : files) {
            int n = 0;
            boolean inComment = false;
            for (String line : Files.readAllLines(f)) {
                n++;
                String code = line.strip();
                if (inComment) {
                    int end = code.indexOf("*/");
                    if (end < 0) {
                        continue;
                    }
                    code = code.substring(end + 2);
                    inComment = false;
                }
                if (code.startsWith("*") || code.startsWith("//")) {
                    continue;
                }
                int open = code.indexOf("/*");
                if (open >= 0) {
                    inComment = code.indexOf("*/", open) < 0;
                    code = code.substring(0, open);
                }
                int comment = code.indexOf("//");
                if (comment >= 0) {
                    code = code.substring(0, comment);
                }
                Matcher m = REFERENCE.matcher(code);
                while (m.find()) {
                    out.add(new Reference(root.relativize(f).toString(), n, m.group(1) != null ? m.group(1) : "",
                        line.strip()));
                }
            }
        }
        return out;
    }
}
