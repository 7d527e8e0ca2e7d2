package io.nvmf4j.config;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Parsing, atomic saving and identity assignment of the configuration document. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ConfigStoreTest {

    @TempDir
    Path dir;

    // ---- parse ----

    static Stream<Arguments> badDocuments() {
        return Stream.of(
            Arguments.of("unknown top-level field", "{\"cores\": 2, \"colour\": \"blue\"}",
                List.of("colour", "line 1, column")),
            Arguments.of("unknown nested field", "{\n  \"subsystems\": [ {\n    \"nqn\": \"nqn.a\",\n"
                + "    \"listeners\": [ { \"address\": \"127.0.0.1\", \"prot\": 4420 } ]\n  } ]\n}",
                List.of("prot", "line 4, column")),
            Arguments.of("trailing garbage", "{\"cores\": 2}\n}", List.of("line 2, column")),
            Arguments.of("a second document", "{\"cores\": 2}\n{\"cores\": 3}", List.of("line 2, column")),
            Arguments.of("string for an int", "{\"cores\": \"two\"}",
                List.of("cores: expected an integer, got a string", "line 1, column")),
            Arguments.of("null for an int", "{\n\"tcp\": {\"mdtsBytes\": null}}", List.of("int", "line 2, column")),
            Arguments.of("object for a list", "{\"bdevs\": {\"name\": \"m0\"}}", List.of("line 1, column")),
            Arguments.of("string for a boolean", "{\"subsystems\": [{\"allowAnyHost\": \"yes\"}]}",
                List.of("subsystems[0].allowAnyHost: expected true or false, got a string", "line 1, column")),
            Arguments.of("array for the document", "[]", List.of("line 1, column")),
            Arguments.of("not JSON", "cores = 2", List.of("line 1, column")),
            Arguments.of("truncated", "{\"cores\": 2, \"bdevs\": [", List.of("line 1, column")),
            Arguments.of("empty", "", List.of("document: empty")),
            Arguments.of("only whitespace", "  \n  ", List.of("document: empty")),
            // no coercion: every value must have its field's JSON type
            Arguments.of("numeric string for an int", "{\"cores\": \"2\"}",
                List.of("cores: expected an integer, got a string (line 1, column 11)")),
            Arguments.of("integral float for an int", "{\"cores\": 2.0}",
                List.of("cores: expected an integer, got a decimal number")),
            Arguments.of("exponent for an int", "{\"cores\": 1e2}",
                List.of("cores: expected an integer, got a decimal number")),
            Arguments.of("int beyond int", "{\"cores\": 99999999999}", List.of("cores: number out of range")),
            Arguments.of("int beyond long", "{\"bdevs\": [{\"numBlocks\": 99999999999999999999999}]}",
                List.of("bdevs[0].numBlocks: number out of range")),
            Arguments.of("number for a string", "{\"idleStrategy\": 5}",
                List.of("idleStrategy: expected a string, got an integer")),
            Arguments.of("boolean for a string", "{\"subsystems\": [{\"nqn\": true}]}",
                List.of("subsystems[0].nqn: expected a string, got a boolean")),
            Arguments.of("number for a host", "{\"subsystems\": [{\"hosts\": [5]}]}",
                List.of("subsystems[0].hosts[0]: expected a string, got an integer")),
            Arguments.of("1 for a boolean", "{\"subsystems\": [{\"allowAnyHost\": 1}]}",
                List.of("subsystems[0].allowAnyHost: expected true or false, got an integer")),
            Arguments.of("empty string for an object", "{\"tcp\": \"\"}", List.of("tcp: expected an object")),
            Arguments.of("null for a nested int", "{\"bdevs\": [{\"name\": \"a\", \"ioWorkers\": \"3\"}]}",
                List.of("bdevs[0].ioWorkers: expected an integer, got a string")),
            // no duplicate keys: the second value would silently win
            Arguments.of("duplicate top-level key", "{\"cores\": 2, \"cores\": 3}",
                List.of("cores: duplicate key (line 1, column")),
            Arguments.of("duplicate nested key", "{\"subsystems\": [{\"listeners\": [{\"port\": 1, \"port\": 2}]}]}",
                List.of("subsystems[0].listeners[0].port: duplicate key")),
            Arguments.of("JSON null", "null", List.of("empty")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badDocuments")
    void parseRejectsWithAConfigExceptionThatSaysWhere(String name, String json, List<String> mentions) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigStore.parse(json));
        assertThat(e).as("parse of %s", name).isNotNull();
        assertThat(e.problems()).hasSize(1);
        for (String m : mentions) {
            assertThat(e.getMessage()).contains(m);
        }
        assertThat(e.getMessage()).as("plain words, not Jackson's").doesNotContain("`", "Cannot ", "fasterxml",
            "java.", "Unexpected character", "Source:");
    }

    @Test
    void parseAcceptsAMinimalDocumentAndKeepsDefaults() {
        TargetConfig c = ConfigStore.parse("{\"cores\": 4}");
        assertThat(c.cores).isEqualTo(4);
        assertThat(c.idleStrategy).isEqualTo("backoff");
        assertThat(c.tcp.inCapsuleDataSize).isEqualTo(8192);
        assertThat(c.bdevs).isEmpty();
        assertThat(c.subsystems).isEmpty();
    }

    @Test
    void parseRejectsAFractionForAnInt() {
        assertThatThrownBy(() -> ConfigStore.parse("{\"cores\": 1.5}")).isInstanceOf(ConfigException.class);
    }

    // ---- save / load ----

    /** The default with identities plus every kind of optional content. */
    private static TargetConfig richConfig() {
        TargetConfig c = ConfigStore.defaultConfig();
        c.cores = 3;
        c.idleStrategy = "busy";
        c.tcp.inCapsuleDataSize = 4096;
        c.tcp.mdtsBytes = 1 << 20;
        c.tcp.c2hSuccess = false;
        Path tmp = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath().normalize();
        c.storage = StorageConfig.directories(tmp.toString());
        c.storage.blockDevices.add("/dev/nvme0n1"); // listed, absent here: fine until a bdev names it
        BdevConfig f = new BdevConfig("disk", "file", 4096, 0);
        f.path = tmp.resolve("nvmf4j-config-store-test-disk.img").toString(); // validated, never created
        f.directIo = true;
        c.bdevs.add(f);
        c.bdevs.add(new BdevConfig("nul", "null", 512, 1L << 40));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = "nqn.2026-11.io.nvmf4j:second";
        s.model = "second model";
        s.hosts.add("nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-000000000001");
        s.maxNamespaces = 8;
        s.minCntlid = 10;
        s.maxCntlid = 20;
        NamespaceConfig n = new NamespaceConfig(5, "disk");
        n.eui64 = "0011223344556677";
        s.namespaces.add(n);
        s.namespaces.add(new NamespaceConfig(6, "nul"));
        s.listeners.add(new ListenerConfig("tcp", "::1", 4421));
        c.subsystems.add(s);
        ConfigStore.assignIdentities(c);
        ConfigValidator.validate(c);
        return c;
    }

    @Test
    void saveThenLoadRoundTrips() throws IOException {
        TargetConfig c = richConfig();
        Path file = dir.resolve("c.json");
        ConfigStore.save(file, c);
        assertThat(Files.readString(file, StandardCharsets.UTF_8)).isEqualTo(ConfigStore.toJson(c));
        TargetConfig loaded = ConfigStore.load(file);
        assertThat(ConfigStore.toJson(loaded)).isEqualTo(ConfigStore.toJson(c));
        assertThatCode(() -> ConfigValidator.validate(loaded)).doesNotThrowAnyException();
        assertThat(loaded.bdev("disk").directIo).isTrue();
        assertThat(loaded.subsystems.get(1).namespaces.get(0).eui64).isEqualTo("0011223344556677");
        assertThat(ConfigStore.assignIdentities(loaded)).as("identities survived the round trip").isFalse();
    }

    @Test
    void saveCreatesMissingDirectoriesAndLeavesNoTemporaryFile() throws IOException {
        Path file = dir.resolve("a/b/config.json");
        ConfigStore.save(file, ConfigStore.defaultConfig());
        assertThat(file).exists();
        try (Stream<Path> s = Files.list(file.getParent())) {
            assertThat(s.map(p -> p.getFileName().toString())).containsExactly("config.json");
        }
    }

    @Test
    void saveReplacesTheFileByRename() throws IOException {
        Path file = dir.resolve("c.json");
        TargetConfig first = ConfigStore.defaultConfig();
        ConfigStore.save(file, first);
        Object keyBefore = Files.readAttributes(file, BasicFileAttributes.class).fileKey();

        TargetConfig second = ConfigStore.defaultConfig();
        second.cores = 7;
        ConfigStore.save(file, second);

        assertThat(ConfigStore.load(file).cores).isEqualTo(7);
        assertThat(Files.readString(file)).isEqualTo(ConfigStore.toJson(second));
        Object keyAfter = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
        if (keyBefore != null) {
            assertThat(keyAfter).as("a new inode renamed over the old one, not the old file rewritten in place")
                .isNotEqualTo(keyBefore);
        }
        try (Stream<Path> s = Files.list(dir)) {
            assertThat(s.map(p -> p.getFileName().toString())).containsExactly("c.json");
        }
    }

    @Test
    void aFailedSaveLeavesTheOldFileIntact() throws IOException {
        Path file = dir.resolve("c.json");
        ConfigStore.save(file, ConfigStore.defaultConfig());
        String before = Files.readString(file);
        // the temporary file cannot be created: its name is taken by a non-empty directory (works as root too)
        Path blocker = dir.resolve(".c.json.tmp");
        Files.createDirectories(blocker.resolve("x"));

        TargetConfig other = ConfigStore.defaultConfig();
        other.cores = 9;
        assertThatThrownBy(() -> ConfigStore.save(file, other)).isInstanceOf(IOException.class);
        assertThat(Files.readString(file)).isEqualTo(before);
    }

    @Test
    void saveIntoAReadOnlyDirectoryFailsAndLeavesTheOldFileIntact() throws IOException {
        Assumptions.assumeFalse(isRoot(), "running as root: root ignores directory permissions, so a read-only "
            + "directory cannot make the save fail");
        Path ro = dir.resolve("ro");
        Path file = ro.resolve("c.json");
        ConfigStore.save(file, ConfigStore.defaultConfig());
        String before = Files.readString(file);
        Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("r-x------"));
        try {
            TargetConfig other = ConfigStore.defaultConfig();
            other.cores = 9;
            assertThatThrownBy(() -> ConfigStore.save(file, other)).isInstanceOf(IOException.class);
            assertThat(Files.readString(file)).isEqualTo(before);
            try (Stream<Path> s = Files.list(ro)) {
                assertThat(s.map(p -> p.getFileName().toString())).containsExactly("c.json");
            }
        } finally {
            Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("rwx------"));
        }
    }

    private static boolean isRoot() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "root".equals(System.getProperty("user.name"));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"cores\": ", "{\"unknownField\": 1}"})
    void loadOfABadFileIsAConfigException(String content) throws IOException {
        Path file = dir.resolve("bad.json");
        Files.writeString(file, content);
        assertThatThrownBy(() -> ConfigStore.load(file)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("line 1");
    }

    // ---- identities ----

    @Test
    void assignIdentitiesFillsWhatIsMissingOnce() {
        TargetConfig c = ConfigStore.defaultConfig();
        SubsystemConfig s2 = new SubsystemConfig();
        s2.nqn = "nqn.2026-11.io.nvmf4j:two";
        c.bdevs.add(new BdevConfig("m1", "malloc", 512, 8));
        c.bdevs.add(new BdevConfig("m2", "malloc", 512, 8));
        s2.namespaces.add(new NamespaceConfig(1, "m1"));
        s2.namespaces.add(new NamespaceConfig(2, "m2"));
        c.subsystems.add(s2);

        assertThat(ConfigStore.assignIdentities(c)).as("first call changes the document").isTrue();
        for (SubsystemConfig s : c.subsystems) {
            assertThat(s.serial).isNotBlank().hasSizeLessThanOrEqualTo(20).matches("[\\x20-\\x7e]+");
            for (NamespaceConfig n : s.namespaces) {
                assertThat(n.nguid).matches("[0-9a-fA-F]{32}");
                assertThat(UUID.fromString(n.uuid).toString()).isEqualTo(n.uuid.toLowerCase());
            }
        }
        assertThat(c.subsystems.get(0).serial).isNotEqualTo(s2.serial);
        assertThat(s2.namespaces.get(0).nguid).isNotEqualTo(s2.namespaces.get(1).nguid);
        assertThat(s2.namespaces.get(0).uuid).isNotEqualTo(s2.namespaces.get(1).uuid);
        assertThatCode(() -> ConfigValidator.validate(c)).as("generated identities validate").doesNotThrowAnyException();

        String after = ConfigStore.toJson(c);
        assertThat(ConfigStore.assignIdentities(c)).as("second call finds nothing to do").isFalse();
        assertThat(ConfigStore.toJson(c)).as("second call changes nothing").isEqualTo(after);
    }

    @Test
    void assignIdentitiesNeverChangesExistingValues() {
        TargetConfig c = ConfigStore.defaultConfig();
        c.bdevs.add(new BdevConfig("m1", "malloc", 512, 8));
        SubsystemConfig s = c.subsystems.get(0);
        s.serial = "KEEP-ME";
        NamespaceConfig kept = s.namespaces.get(0);
        kept.nguid = "0123456789abcdef0123456789abcdef";
        kept.uuid = "9b2a5f0e-3c41-4e8a-b1d7-5a6c7e8f9012";
        kept.eui64 = "0011223344556677";
        NamespaceConfig partial = new NamespaceConfig(2, "m1");
        partial.uuid = "11111111-2222-3333-4444-555555555555";
        s.namespaces.add(partial);

        assertThat(ConfigStore.assignIdentities(c)).as("namespace 2 lacked an NGUID").isTrue();
        assertThat(s.serial).isEqualTo("KEEP-ME");
        assertThat(kept.nguid).isEqualTo("0123456789abcdef0123456789abcdef");
        assertThat(kept.uuid).isEqualTo("9b2a5f0e-3c41-4e8a-b1d7-5a6c7e8f9012");
        assertThat(kept.eui64).isEqualTo("0011223344556677");
        assertThat(partial.uuid).isEqualTo("11111111-2222-3333-4444-555555555555");
        assertThat(partial.nguid).matches("[0-9a-fA-F]{32}");
        assertThat(partial.eui64).as("EUI-64 is optional and never generated").isNull();
        assertThat(ConfigStore.assignIdentities(c)).isFalse();
    }

    @Test
    void assignIdentitiesOnAFullyIdentifiedDocumentReturnsFalse() {
        TargetConfig c = ConfigStore.defaultConfig();
        c.subsystems.get(0).serial = "S";
        c.subsystems.get(0).namespaces.get(0).nguid = "0".repeat(32);
        c.subsystems.get(0).namespaces.get(0).uuid = "9b2a5f0e-3c41-4e8a-b1d7-5a6c7e8f9012";
        assertThat(ConfigStore.assignIdentities(c)).isFalse();
    }
}
