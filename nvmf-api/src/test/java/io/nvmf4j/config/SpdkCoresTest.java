package io.nvmf4j.config;

import org.junit.jupiter.api.Test;

import java.util.BitSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The spdk engine's {@code coreMask}: hex masks and core lists, and the errors for everything else. */
class SpdkCoresTest {
    private static BitSet cores(int... c) {
        BitSet b = new BitSet();
        for (int i : c) {
            b.set(i);
        }
        return b;
    }

    @Test
    void hexMasksAndListsNameTheSameCores() {
        assertThat(SpdkCores.parse("0x1")).isEqualTo(cores(0));
        assertThat(SpdkCores.parse("0X6")).isEqualTo(cores(1, 2));
        assertThat(SpdkCores.parse("0x101")).isEqualTo(cores(0, 8));
        assertThat(SpdkCores.parse("[0,2-3]")).isEqualTo(cores(0, 2, 3));
        assertThat(SpdkCores.parse(" [ 5 ] ")).isEqualTo(cores(5));
        assertThat(SpdkCores.toMask(cores(0, 2, 3))).isEqualTo("0xd");
        assertThat(SpdkCores.toMask(cores(0, 8))).isEqualTo("0x101");
        assertThat(SpdkCores.toMask(SpdkCores.parse("[1023]"))).startsWith("0x8").hasSize(2 + 256);
    }

    @Test
    void badSpecificationsSayWhy() {
        assertThatThrownBy(() -> SpdkCores.parse(null)).hasMessageContaining("at least one core");
        assertThatThrownBy(() -> SpdkCores.parse("")).hasMessageContaining("at least one core");
        assertThatThrownBy(() -> SpdkCores.parse("0x0")).hasMessageContaining("names no core");
        assertThatThrownBy(() -> SpdkCores.parse("0xg")).hasMessageContaining("not a hex core mask");
        assertThatThrownBy(() -> SpdkCores.parse("3")).hasMessageContaining("hex mask (0x3) or a list");
        assertThatThrownBy(() -> SpdkCores.parse("[3-1]")).hasMessageContaining("empty or beyond");
        assertThatThrownBy(() -> SpdkCores.parse("[1024]")).hasMessageContaining("beyond 1023");
        assertThatThrownBy(() -> SpdkCores.parse("[a]")).hasMessageContaining("not a core or core range");
    }

    @Test
    void theValidatorNamesTheSpdkField() {
        TargetConfig c = ConfigStore.defaultConfig();
        c.spdk.coreMask = "0x0";
        c.spdk.memSizeMb = 1;
        c.spdk.callTimeoutMs = 5;
        assertThatThrownBy(() -> ConfigValidator.validate(c)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("spdk.coreMask: names no core")
            .hasMessageContaining("spdk.memSizeMb: must be 512..1048576, got 1")
            .hasMessageContaining("spdk.callTimeoutMs: must be 1000..600000, got 5");
        c.spdk = null;
        assertThatThrownBy(() -> ConfigValidator.validate(c)).hasMessageContaining("spdk: missing");
    }
}
