package io.nvmf4j.engine;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The control layer's arrows, read from the imports and qualified names of the seam's sources (nvmf-api) and this
 * module's: the configuration model and its validator know no engine and no transport (they read
 * {@code EngineCapabilities}); the control layer knows no engine's classes (engines register through
 * {@code EngineProvider}); nothing but the java engine's own package names it; the commands and the transport
 * interface know no transport (the java engine registers them).
 */
class LayeringTest {
    private static final List<Path> SOURCES = io.nvmf4j.LayeringTest.ROOTS;
    private static final Pattern REFERENCE = Pattern.compile("\\bio\\.nvmf4j\\.([a-z][a-z0-9]*(?:\\.[a-z][a-z0-9]*)*)\\.[A-Z]");

    @Test
    void configImportsNeitherEnginesNorTransports() throws IOException {
        assertThat(references("config")).doesNotContain("engine", "javaengine", "transport");
    }

    @Test
    void theControlLayerNamesNoEngine() throws IOException {
        assertThat(references("engine")).doesNotContain("javaengine", "transport");
    }

    @Test
    void commandsKnowNoTransport() throws IOException {
        assertThat(references("cmd")).doesNotContain("transport", "javaengine");
    }

    @Test
    void theTransportInterfaceKnowsNoTransport() throws IOException {
        assertThat(references("transport")).doesNotContain("javaengine");
        assertThat(references("transport")).allMatch(p -> !p.startsWith("transport."));
    }

    @Test
    void onlyTheJavaEngineNamesItsPackage() throws IOException {
        List<String> users = new ArrayList<>();
        for (Path root : SOURCES) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    if (!f.startsWith(root.resolve("javaengine")) && Files.readString(f).contains("io.nvmf4j.javaengine.")) {
                        users.add(root.relativize(f).toString());
                    }
                }
            }
        }
        assertThat(users).isEmpty();
    }

    /**
     * No code outside the engines' registration ({@code Engines}, {@code EngineCapabilities}, and an engine checking
     * that the document names it) compares an engine's name: what differs between engines is a capability they
     * declare. Read across every module's main sources.
     */
    @Test
    void noCodeBranchesOnAnEngineName() throws IOException {
        Pattern byName = Pattern.compile("Engines\\.(?:SPDK|JAVA)\\.equals|equals\\(Engines\\.(?:SPDK|JAVA)\\)"
            + "|EngineCapabilities\\.(?:SPDK|JAVA)\\.name\\(\\)\\.equals");
        List<String> users = new ArrayList<>();
        int read = 0;
        for (String module : List.of("../nvmf-api", ".", "../spdk-jni", "../mgmt-api")) {
            Path root = Path.of(module, "src/main/java");
            try (Stream<Path> files = Files.walk(root)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    String name = f.getFileName().toString();
                    read++;
                    if (!List.of("Engines.java", "EngineCapabilities.java", "JavaEngine.java").contains(name)
                        && byName.matcher(Files.readString(f)).find()) {
                        users.add(f.toString());
                    }
                }
            }
        }
        assertThat(read).as("the main sources of four modules").isGreaterThan(200);
        assertThat(users).isEmpty();
    }

    /** The packages below io.nvmf4j that the sources directly in {@code pkg} name, comments left out. */
    private static List<String> references(String pkg) throws IOException {
        List<String> out = new ArrayList<>();
        List<Path> dirs = SOURCES.stream().map(root -> root.resolve(pkg)).filter(Files::isDirectory).toList();
        assertThat(dirs).as("the sources of package %s under %s", pkg, SOURCES).isNotEmpty();
        for (Path dir : dirs) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    String code = Files.readString(f).replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\\n]*", "");
                    Matcher m = REFERENCE.matcher(code);
                    while (m.find()) {
                        if (!out.contains(m.group(1))) {
                            out.add(m.group(1));
                        }
                    }
                }
            }
        }
        return out;
    }
}
