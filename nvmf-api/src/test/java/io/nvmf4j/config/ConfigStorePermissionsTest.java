package io.nvmf4j.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;

/** The document may hold the API token: a new file is 0600, a rewrite keeps the permissions it had. */
class ConfigStorePermissionsTest {
    @Test
    void newFileIsPrivateAndRewritesKeepPermissions(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("config.json");
        ConfigStore.save(file, ConfigStore.defaultConfig());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        ConfigStore.save(file, ConfigStore.defaultConfig());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-r-----");
        assertThat(Files.list(dir)).as("no temporary file left").containsExactly(file);
    }
}
