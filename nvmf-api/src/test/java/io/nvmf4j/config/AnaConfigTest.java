package io.nvmf4j.config;

import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** The config rules of ANA: a namespace's anaGroup, a listener's anaStates, and what the spdk engine takes. */
class AnaConfigTest {
    private static TargetConfig config(Integer group, Map<String, String> states) {
        TargetConfig c = new TargetConfig();
        c.bdevs.add(new BdevConfig("m0", "malloc", 512, 2048));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = "nqn.2024-01.io.nvmf4j:ana";
        s.allowAnyHost = true;
        NamespaceConfig n = new NamespaceConfig(1, "m0");
        n.anaGroup = group;
        s.namespaces.add(n);
        ListenerConfig l = new ListenerConfig("tcp", "127.0.0.1", 4420);
        l.anaStates = states == null ? null : new LinkedHashMap<>(states);
        s.listeners.add(l);
        c.subsystems.add(s);
        return c;
    }

    private static String problems(TargetConfig c) {
        return Refusals.problems(c);
    }

    @Test
    void groupsAndStatesValidate() {
        assertThatCode(() -> ConfigValidator.validate(config(128, Map.of("1", "non-optimized", "128", "change",
            "7", "persistent-loss", "2", "inaccessible", "3", "optimized")))).doesNotThrowAnyException();
        assertThatCode(() -> ConfigValidator.validate(config(null, null))).doesNotThrowAnyException();
    }

    @Test
    void badGroupsAndStatesAreRefusedWithTheirField() {
        assertThat(problems(config(0, null))).contains(
            "subsystems[0].namespaces[0].anaGroup: an ANA group id must be 1..128, got 0");
        assertThat(problems(config(129, null))).contains("anaGroup: an ANA group id must be 1..128, got 129");
        assertThat(problems(config(1, Map.of("0", "optimized")))).contains(
            "subsystems[0].listeners[0].anaStates.0: an ANA group id must be 1..128, got 0");
        assertThat(problems(config(1, Map.of("01", "optimized")))).contains("anaStates.01: an ANA group id");
        assertThat(problems(config(1, Map.of("x", "optimized")))).contains("anaStates.x: an ANA group id");
        assertThat(problems(config(1, Map.of("1", "Optimized")))).contains("subsystems[0].listeners[0].anaStates.1: "
            + "must be optimized, non-optimized, inaccessible, persistent-loss, change, got Optimized");
    }

    /**
     * The ANA log page must fit in one transfer of the listener's transport (Linux turns ANA off otherwise): 16 bytes,
     * 32 per group, 4 per namespace of maxNamespaces. At tcp.mdtsBytes 8192 (the smallest MDTS can report) and
     * maxNamespaces 1024, 127 groups fit.
     */
    @Test
    void anAnaLogPageBeyondMdtsIsRefusedNamingTheField() {
        TargetConfig c = config(1, null);
        c.tcp.mdtsBytes = 8192;
        c.subsystems.get(0).maxNamespaces = 1024;
        for (int g = 2; g <= 128; g++) {
            c.bdevs.add(new BdevConfig("m" + g, "malloc", 512, 2048));
            NamespaceConfig n = new NamespaceConfig(g, "m" + g);
            n.anaGroup = g;
            c.subsystems.get(0).namespaces.add(n);
        }
        assertThat(problems(c)).contains("subsystems[0].namespaces: 128 ANA groups (anaGroup), but the ANA log page"
            + " holds 127 within tcp.mdtsBytes 8192 next to maxNamespaces 1024 NSIDs");
        c.subsystems.get(0).maxNamespaces = 1000;
        assertThatCode(() -> ConfigValidator.validate(c)).as("128 groups fit next to 1000 NSIDs")
            .doesNotThrowAnyException();
        c.subsystems.get(0).maxNamespaces = 1024;
        c.tcp.mdtsBytes = 16384;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    /**
     * Above 1,024 namespaces the same rule bounds maxNamespaces on the java engine: at the default tcp.mdtsBytes
     * (128 KiB) at most 32,756 NSIDs next to one group's descriptor.
     */
    @Test
    void maxNamespacesAbove1024IsBoundedByTheAnaLogWithinMdts() {
        TargetConfig c = config(1, null);
        c.subsystems.get(0).maxNamespaces = SubsystemConfig.MAX_NAMESPACES;
        assertThat(problems(c)).contains("subsystems[0].maxNamespaces: the ANA log page (16 bytes, 32 per ANA group,"
            + " 4 per namespace) must fit in tcp.mdtsBytes 131072 (a Linux host turns ANA off otherwise): at most 32756,"
            + " got 65535");
        c.subsystems.get(0).maxNamespaces = 32756;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        c.tcp.mdtsBytes = 1 << 20;
        c.subsystems.get(0).maxNamespaces = SubsystemConfig.MAX_NAMESPACES;
        assertThatCode(() -> ConfigValidator.validate(c)).as("with a 1 MiB MDTS").doesNotThrowAnyException();
    }

    /**
     * The spdk engine takes ANA groups and the states SPDK's listeners have (optimized, non-optimized, inaccessible);
     * it refuses the two others and groups above maxNamespaces (SPDK's ANAGRPMAX), naming the field.
     */
    @Test
    void theSpdkEngineTakesWhatSpdkHasAndRefusesTheRestSayingWhy() {
        TargetConfig ok = config(2, Map.of("1", "non-optimized", "2", "inaccessible", "3", "optimized"));
        ok.engine = Engines.SPDK;
        assertThatCode(() -> ConfigValidator.validate(ok)).doesNotThrowAnyException();

        TargetConfig states = config(1, Map.of("1", "change", "2", "persistent-loss"));
        states.engine = Engines.SPDK;
        assertThat(problems(states)).contains("subsystems[0].listeners[0].anaStates.1: change is java engine only "
            + "(SPDK's listeners are optimized, non-optimized or inaccessible)",
            "subsystems[0].listeners[0].anaStates.2: persistent-loss is java engine only");

        TargetConfig groups = config(33, Map.of("40", "inaccessible"));
        groups.engine = Engines.SPDK;
        assertThat(problems(groups)).contains(
            "subsystems[0].namespaces[0].anaGroup: the spdk engine numbers ANA groups 1..maxNamespaces (32), got 33",
            "subsystems[0].listeners[0].anaStates.40: the spdk engine numbers ANA groups 1..maxNamespaces (32), got 40");
        groups.subsystems.get(0).maxNamespaces = 40;
        assertThatCode(() -> ConfigValidator.validate(groups)).doesNotThrowAnyException();
        groups.engine = Engines.JAVA;
        groups.subsystems.get(0).maxNamespaces = 32;
        assertThatCode(() -> ConfigValidator.validate(groups)).as("the java engine: 1..128").doesNotThrowAnyException();
    }
}
