package io.nvmf4j.javaengine;

import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.PoolConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What the java engine is registered to do matches what its data path has. */
class JavaEngineCapabilitiesTest {
    @Test
    void itsTransportsAreTheBuiltInOnes() {
        assertThat(EngineCapabilities.JAVA.transports()).isEqualTo(TransportRegistry.builtIn().names());
    }

    /**
     * Every capability but the spdk engine's pool kind (SPDK's lvol store), which it refuses with its reason; its
     * own pool kinds are reflink-dir and rbd.
     */
    @Test
    void itHasEveryCapabilityAndRefusesOnlyTheLvolPoolKind() {
        assertThat(EngineCapabilities.JAVA.features()).containsExactlyInAnyOrder(EngineCapabilities.Feature.values());
        assertThat(EngineCapabilities.JAVA.refusals()).containsOnlyKeys("pool." + PoolConfig.KIND_LVOL);
        assertThat(EngineCapabilities.JAVA.poolKinds()).containsExactlyInAnyOrder(PoolConfig.KIND_REFLINK_DIR,
            PoolConfig.KIND_RBD);
        assertThat(EngineCapabilities.JAVA.bdevTypes()).contains("error", "rbd");
    }
}
