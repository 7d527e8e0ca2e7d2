package io.nvmf4j.service;

import io.nvmf4j.SourceReferences;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The service (REST API, metrics, CLI) reaches the engines through the seam alone: the configuration model, the
 * control layer and its engine interfaces and records ({@code engine}, metrics through {@code IoObserver},
 * {@code EngineIoStats} and {@code RbdCounters}, never an engine's class), the protocol's constants ({@code nvme}),
 * key handling ({@code auth}), the process runtime ({@code runtime}) and the kernel's settings read whole
 * ({@code kernel}, in the native module below every engine); never an engine's data path ({@code core},
 * {@code bdev}, {@code cmd}, {@code transport}, {@code qos}) nor an engine's own package ({@code javaengine},
 * {@code spdk}: engines register through {@code EngineProvider}).
 */
class SeamTest {
    static final Set<String> SEAM = Set.of("", "config", "engine", "nvme", "auth", "runtime", "kernel", "service",
        "cli");

    @Test
    void theServiceNamesOnlyTheSeam() throws Exception {
        var refs = SourceReferences.under(Path.of("src/main/java"));
        assertThat(refs).as("references to io.nvmf4j packages in mgmt-api's sources").hasSizeGreaterThan(100);
        assertThat(refs).filteredOn(r -> !SEAM.contains(r.pkg())).as("references past the seam").isEmpty();
    }
}
