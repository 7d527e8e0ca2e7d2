package io.nvmf4j;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The java engine's packages stand in layers, each using only the layers below it: no import cycle, and no arrow
 * from a lower package up to a higher one. Read from the sources' own import lines and fully qualified names
 * (outside comments), so a new arrow that runs up fails here where it is written. The seam's packages (nvmf-api's
 * sources) are read with this module's: a package may have classes in both.
 */
public class LayeringTest {
    /** Each package of {@code io.nvmf4j} and its layer; "" is the root package, rdma the native loader and rdma-cm. */
    static final Map<String, Integer> LAYERS = Map.ofEntries(
        Map.entry("", 0), Map.entry("nvme", 0), Map.entry("runtime", 0), Map.entry("rdma", 0),
        Map.entry("os", 1),
        Map.entry("auth", 2),
        Map.entry("config", 3),
        Map.entry("engine", 4), Map.entry("storage", 4),
        Map.entry("bdev", 5), Map.entry("qos", 5),
        Map.entry("core", 6),
        Map.entry("cmd", 7),
        Map.entry("transport", 8),
        Map.entry("javaengine", 9));

    private static final Pattern REFERENCE = Pattern.compile("\\bio\\.nvmf4j\\.(?:([a-z][a-z0-9]*)\\.|([A-Z]))");

    /** The sources read: the seam's (nvmf-api) and the java engine's (this module). */
    public static final List<Path> ROOTS = List.of(Path.of("../nvmf-api/src/main/java/io/nvmf4j"),
        Path.of("src/main/java/io/nvmf4j"));

    @Test
    void everyPackageUsesOnlyTheLayersBelowIt() throws IOException {
        List<String> wrong = new ArrayList<>();
        List<Path> files = new ArrayList<>();
        for (Path root : ROOTS) {
            try (Stream<Path> s = Files.walk(root)) {
                files.addAll(s.filter(f -> f.toString().endsWith(".java")).toList());
            }
        }
        assertThat(files).as("the seam's and the java engine's sources under %s", ROOTS).hasSizeGreaterThan(100);
        for (Path f : files) {
            Path root = ROOTS.stream().filter(f::startsWith).findFirst().orElseThrow();
            Path rel = root.relativize(f);
            String pkg = rel.getNameCount() == 1 ? "" : rel.getName(0).toString();
            assertThat(LAYERS).as("the layer of package io.nvmf4j.%s (%s): add it to LAYERS", pkg, rel)
                .containsKey(pkg);
            int mine = LAYERS.get(pkg);
            int n = 0;
            for (String line : Files.readAllLines(f)) {
                n++;
                String code = line.strip();
                if (code.startsWith("*") || code.startsWith("/*") || code.startsWith("//")) {
                    continue;
                }
                int comment = code.indexOf("//");
                if (comment >= 0) {
                    code = code.substring(0, comment);
                }
                Matcher m = REFERENCE.matcher(code);
                while (m.find()) {
                    String used = m.group(1) != null ? m.group(1) : "";
                    if (used.equals(pkg)) {
                        continue;
                    }
                    Integer theirs = LAYERS.get(used);
                    if (theirs == null || theirs >= mine) {
                        wrong.add(rel + ":" + n + " (" + (pkg.isEmpty() ? "root" : pkg) + ", layer " + mine + ") uses "
                            + (used.isEmpty() ? "root" : used) + " (layer " + theirs + "): " + line.strip());
                    }
                }
            }
        }
        assertThat(wrong).as("references from a package to one in its own layer or above").isEmpty();
    }
}
