package io.nvmf4j.service.profile;

import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.SpdkCores;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.BitSet;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every profile loads, validates through the service's own validator, and fits its card (or, scaled, a smaller machine). */
class ProfileTest {
    // documentation addresses (RFC 5737): the profile's parameters
    private static final List<String> UPLINKS = List.of("192.0.2.10", "198.51.100.10");
    private static final String MGMT = "203.0.113.5";

    @ParameterizedTest
    @ValueSource(strings = {"bluefield2", "bluefield3"})
    void loadsAndValidatesWithItsParameters(String name) {
        Profile p = Profile.load(name);
        assertThat(p.machine.name).isEqualTo(name);
        assertThatCode(() -> ConfigValidator.validate(p.preset())).doesNotThrowAnyException();
        TargetConfig c = p.config(UPLINKS, MGMT);
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        assertThat(c.api.address).isEqualTo(MGMT);
        assertThat(c.api.tlsCert).isNotNull();
        assertThat(c.api.tlsKey).isNotNull();
        assertThat(c.api.token).as("token: made at first start, 0600").isNull();
        List<ListenerConfig> ls = c.subsystems.get(0).listeners;
        assertThat(ls).extracting(l -> l.transport).containsOnly("rdma");
        assertThat(ls).extracting(l -> l.address).containsExactlyElementsOf(UPLINKS);
        assertThat(ls).extracting(l -> l.port).containsOnly(p.machine.listenPort);
        assertThat(c.rdma.hugepages).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"bluefield2", "bluefield3"})
    void pollGroupsArePinnedToTheCardsCoresBeyondTheOsOnes(String name) {
        Profile p = Profile.load(name);
        TargetConfig c = p.preset();
        BitSet pinned = SpdkCores.parse(c.pollGroupCores);
        BitSet expected = new BitSet();
        expected.set(p.machine.osCpus, p.machine.cpus);
        assertThat(pinned).isEqualTo(expected);
        assertThat(c.cores).isEqualTo(p.machine.cpus - p.machine.osCpus);
        assertThat(Profile.cpuList(c)).isEqualTo(p.machine.osCpus + "-" + (p.machine.cpus - 1));
    }

    @Test
    void theCardsAreTheModelsTheIssueNames() {
        Profile b2 = Profile.load("bluefield2");
        Profile b3 = Profile.load("bluefield3");
        assertThat(List.of(b2.machine.cpus, b2.machine.memoryGiB, b3.machine.cpus, b3.machine.memoryGiB))
            .containsExactly(8, 16, 16, 32);
        assertThat(b2.machine.cpuName).isEqualTo("Cortex-A72");
        assertThat(b3.machine.cpuName).isEqualTo("Cortex-A78");
        assertThat(List.of(b2.machine.arch, b3.machine.arch)).containsOnly("aarch64");
        assertThat(List.of(b2.machine.rdmaDriver, b3.machine.rdmaDriver)).containsOnly("mlx5");
    }

    @ParameterizedTest
    @ValueSource(strings = {"bluefield2", "bluefield3"})
    void jvmOptionsAskForALowPauseGcPreTouchAndLargePages(String name) {
        Profile p = Profile.load(name);
        assertThat(p.jvmOptions).contains("-XX:+UseZGC", "-XX:+AlwaysPreTouch", "-XX:+UseTransparentHugePages");
        assertThat(p.jvmOptions).noneMatch(o -> o.startsWith("#") || o.isBlank());
        assertThat(p.heapShare()).isBetween(0.05, 0.25);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bluefield2", "bluefield3"})
    void hugepagesHoldEveryPollGroupsBuffersOnEachPortAndFitTheCard(String name) {
        Profile p = Profile.load(name);
        TargetConfig c = p.preset();
        Sizing s = Sizing.asShipped(p, c);
        long perGroupAndPort = (long) c.rdma.dataBuffers * c.rdma.mdtsBytes
            + (long) c.rdma.srqDepth * (64 + c.rdma.inCapsuleDataSize);
        assertThat(s.hugepages * Profile.HUGEPAGE_BYTES)
            .isGreaterThanOrEqualTo(perGroupAndPort * c.cores * p.machine.rdmaPorts);
        long card = (long) p.machine.memoryGiB << 30;
        // buffers, heap and reserve leave the card's OS room
        assertThat(s.hugepages * Profile.HUGEPAGE_BYTES + s.availableBytes).isLessThan(card / 2);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bluefield2", "bluefield3"})
    void scaledDownToASmallArmGuestItStillValidates(String name) {
        Profile p = Profile.load(name);
        TargetConfig shipped = p.preset();
        BitSet four = new BitSet();
        four.set(0, 4);
        TargetConfig c = p.config(UPLINKS, MGMT);
        Sizing s = Sizing.scaledDown(p, c, four, 4L << 30);
        assertThat(c.cores).isEqualTo(2);
        assertThat(c.pollGroupCores).isEqualTo("[2-3]");
        double f = (4.0 * (1L << 30)) / ((long) p.machine.memoryGiB << 30);
        assertThat(s.memoryFactor).isEqualTo(f);
        assertThat(c.rdma.dataBuffers).isEqualTo(Math.max(16, (int) (shipped.rdma.dataBuffers * f)));
        assertThat(c.rdma.srqDepth).isLessThan(shipped.rdma.srqDepth).isGreaterThanOrEqualTo(256);
        assertThat(s.hugepages).isLessThan(Sizing.asShipped(p, shipped).hugepages);
        assertThat(s.cpus).isEqualTo(4);
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    @Test
    void scaledDownToOneOrTwoCpusTheOsKeepsOneWhenThereAreTwo() {
        Profile p = Profile.load("bluefield3");
        BitSet two = new BitSet();
        two.set(0, 2);
        TargetConfig c = p.preset();
        Sizing.scaledDown(p, c, two, 8L << 30);
        assertThat(c.cores).isEqualTo(1);
        assertThat(c.pollGroupCores).isEqualTo("[1]");
        BitSet one = new BitSet();
        one.set(3);
        TargetConfig d = p.preset();
        Sizing.scaledDown(p, d, one, 8L << 30);
        assertThat(d.cores).isEqualTo(1);
        assertThat(d.pollGroupCores).isEqualTo("[3]");
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        assertThatCode(() -> ConfigValidator.validate(d)).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"bluefield2", "bluefield3"})
    void thePresetLeavesTheEngineToTheProfileWhoseDefaultIsSpdkOnThePollGroupsCores(String name) {
        Profile p = Profile.load(name);
        TargetConfig c = p.config(UPLINKS, MGMT);
        assertThat(p.machine.engine).isEqualTo(Engines.SPDK);
        assertThat(c.engine).as("the preset names no engine: the document's default").isEqualTo(Engines.JAVA);
        assertThat(SpdkCores.parse(c.spdk.coreMask)).isEqualTo(SpdkCores.parse(c.pollGroupCores));
        assertThat(c.spdk.hugepages).isTrue();
        c.engine = Engines.SPDK;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"bluefield2", "bluefield3"})
    void withTheSpdkEngineTheHugepagesHoldSpdksMemoryAndFitTheCard(String name) {
        Profile p = Profile.load(name);
        TargetConfig c = p.preset();
        c.engine = Engines.SPDK;
        Sizing s = Sizing.asShipped(p, c);
        assertThat(s.hugepages).isEqualTo(c.spdk.memSizeMb / 2 + Profile.SPDK_SPARE_HUGEPAGES);
        assertThat(s.hugepages * Profile.HUGEPAGE_BYTES + s.availableBytes)
            .isLessThan(((long) p.machine.memoryGiB << 30) / 2);
        c.spdk.hugepages = false;
        assertThat(Sizing.asShipped(p, c).hugepages).as("SPDK in ordinary memory").isZero();
    }

    @Test
    void scaledDownTheSpdkEnginesReactorsFollowThePollGroupsAndItsMemoryTheMachine() {
        Profile p = Profile.load("bluefield3");
        BitSet four = new BitSet();
        four.set(0, 4);
        TargetConfig c = p.config(UPLINKS, MGMT);
        c.engine = Engines.SPDK;
        Sizing s = Sizing.scaledDown(p, c, four, 4L << 30);
        assertThat(c.spdk.coreMask).isEqualTo("[2-3]").isEqualTo(c.pollGroupCores);
        assertThat(c.spdk.memSizeMb).isEqualTo(512);
        assertThat(s.hugepages).isEqualTo(256 + Profile.SPDK_SPARE_HUGEPAGES);
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    @Test
    void anUnknownProfileIsRefusedNamingTheOnesThereAre() {
        assertThatThrownBy(() -> Profile.load("bluefield4")).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("no profile 'bluefield4' (profiles: bluefield2, bluefield3)");
    }
}
