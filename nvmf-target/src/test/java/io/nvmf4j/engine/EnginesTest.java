package io.nvmf4j.engine;

import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.javaengine.JavaEngine;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Choosing the engine from the document's {@code "engine"}. */
class EnginesTest {
    private static TargetConfig config(String engine) {
        TargetConfig c = ConfigStore.defaultConfig();
        c.subsystems.get(0).listeners.get(0).port = 0;
        c.cores = 1;
        c.engine = engine;
        return c;
    }

    @Test
    void theDefaultIsTheJavaEngine() throws Exception {
        TargetConfig c = ConfigStore.defaultConfig();
        assertThat(c.engine).isEqualTo("java");
        c.subsystems.get(0).listeners.get(0).port = 0;
        c.cores = 1;
        try (ConfigController<Engine> e = Engines.start(c, IoObserver.NONE)) {
            assertThat(e.engine()).isInstanceOf(JavaEngine.class);
            assertThat(e.name()).isEqualTo("java");
            assertThat(e.listeners()).hasSize(1);
            assertThat(e.configSnapshot().engine).isEqualTo("java");
        }
    }

    @Test
    void spdkWithoutItsModuleOnTheClassPathFailsToStartWithOneClearMessage() {
        // nvmf-target alone: spdk-jni (which provides the spdk engine) is not on this module's class path
        ConfigValidator.validate(config("spdk"));
        assertThatThrownBy(() -> Engines.start(config("spdk"), IoObserver.NONE))
            .isInstanceOf(EngineUnavailableException.class)
            .hasMessageStartingWith("engine spdk: its module is not on the class path")
            .hasMessageContaining("\"engine\": \"java\"");
        assertThat(Engines.unavailabilityCause("spdk")).startsWith("engine spdk: its module is not on the class path");
        assertThat(Engines.unavailabilityCause("java")).isNull();
    }

    @Test
    void runsOnIsNullForAnEngineThatCannotRunAndForOneWithNothingToSay() {
        assertThat(Engines.runsOn("spdk")).as("not on this module's class path").isNull();
        assertThat(Engines.runsOn("java")).as("nothing beyond the JVM").isNull();
    }

    @Test
    void theJavaEngineNeverStandsInForAnother() {
        assertThatThrownBy(() -> JavaEngine.start(config("spdk"))).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("names engine spdk, not java");
    }

    @Test
    void anUnknownOrMissingEngineIsABadDocument() {
        assertThat(Engines.names()).containsExactly("java", "spdk");
        assertThatThrownBy(() -> Engines.start(config("dpdk"), IoObserver.NONE)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("engine: must be java or spdk, got dpdk");
        assertThatThrownBy(() -> ConfigValidator.validate(config(null))).isInstanceOf(ConfigException.class)
            .hasMessageContaining("engine: must be java or spdk, got null");
    }

    @Test
    void engineIsReadFromAndWrittenToTheDocument() {
        TargetConfig c = ConfigStore.parse("{\"engine\": \"spdk\"}");
        assertThat(c.engine).isEqualTo("spdk");
        assertThat(ConfigStore.parse(ConfigStore.toJson(c)).engine).isEqualTo("spdk");
        assertThat(ConfigStore.parse("{}").engine).as("default").isEqualTo("java");
    }
}
