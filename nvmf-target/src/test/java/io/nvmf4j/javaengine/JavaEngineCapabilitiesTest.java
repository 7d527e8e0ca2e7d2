package io.nvmf4j.javaengine;

import io.nvmf4j.config.EngineCapabilities;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What the java engine is registered to do matches what its data path has. */
class JavaEngineCapabilitiesTest {
    @Test
    void itsTransportsAreTheBuiltInOnes() {
        assertThat(EngineCapabilities.JAVA.transports()).isEqualTo(TransportRegistry.builtIn().names());
    }

    @Test
    void itHasEveryCapabilityAndRefusesNothing() {
        assertThat(EngineCapabilities.JAVA.features()).containsExactlyInAnyOrder(EngineCapabilities.Feature.values());
        assertThat(EngineCapabilities.JAVA.refusals()).isEmpty();
        assertThat(EngineCapabilities.JAVA.bdevTypes()).contains("error", "rbd");
    }
}
