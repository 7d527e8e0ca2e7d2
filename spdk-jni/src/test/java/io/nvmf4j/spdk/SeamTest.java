package io.nvmf4j.spdk;

import io.nvmf4j.SourceReferences;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The spdk engine reaches the rest of nvmf4j through the seam alone: the configuration model, the control layer's
 * engine interfaces and records ({@code engine}), the storage-file rules both engines share ({@code storage}), the
 * protocol's constants ({@code nvme}) and the native loader ({@code rdma}); never the java engine's data path
 * ({@code core}, {@code bdev}, {@code cmd}, {@code transport}, {@code qos}, {@code javaengine}).
 */
class SeamTest {
    static final Set<String> SEAM = Set.of("", "config", "engine", "storage", "nvme", "rdma", "spdk");

    @Test
    void theSpdkEngineNamesOnlyTheSeam() throws Exception {
        var refs = SourceReferences.under(Path.of("src/main/java"));
        assertThat(refs).as("references to io.nvmf4j packages in spdk-jni's sources").hasSizeGreaterThan(20);
        assertThat(refs).filteredOn(r -> !SEAM.contains(r.pkg())).as("references past the seam").isEmpty();
    }
}
