package io.nvmf4j.service.profile;

import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which engine a profile runs and the line that says why: the BlueField profiles' spdk engine where its library is in
 * the install and loads and the kernel has 2 MiB hugepages, else java; an engine the configuration names wins; a
 * profile without a default keeps the document's.
 */
class EngineChoiceTest {
    private static final String CONFIG = ProfileSetup.STATE_CONFIG;

    @TempDir
    Path root;

    /** A BlueField-3 as it comes, before setup: no hugepages reserved yet. */
    @BeforeEach
    void card() {
        FakeMachine.arm(root, 16, "0xd41", 32, 24, 0);
    }

    private EngineChoice choose(String profile, EngineProbe probe) {
        return EngineChoice.choose(Profile.load(profile), new MachineFacts(root), probe);
    }

    private void configured(String json) throws Exception {
        Path f = root.resolve(CONFIG.substring(1));
        Files.createDirectories(f.getParent());
        Files.writeString(f, json);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bluefield2", "bluefield3"})
    void theBlueFieldProfilesRunSpdkWhereItsLibraryIsPresentAndLoads(String name) {
        EngineChoice c = choose(name, FakeProbe.SPDK_LOADS);
        assertThat(c.engine()).isEqualTo(Engines.SPDK);
        assertThat(c.runs()).isTrue();
        assertThat(c.line()).isEqualTo("engine: spdk (the profile's default: libnvmf4j_spdk for aarch64 (SPDK v26.05) "
            + "present and loads; this kernel has 2 MiB hugepages, which setup reserves for SPDK's memory)");
    }

    @Test
    void withoutTheLibraryForThisArchitectureTheyRunJavaSayingWhy() {
        EngineChoice c = choose("bluefield3", FakeProbe.SPDK_ABSENT);
        assertThat(c.engine()).isEqualTo(Engines.JAVA);
        assertThat(c.runs()).isTrue();
        assertThat(c.line()).isEqualTo("engine: java (" + FakeProbe.SPDK_ABSENT.spdkCause()
            + "; the profile runs spdk where it can)");
        assertThat(c.line()).startsWith("engine: java (engine spdk cannot run here: libnvmf4j_spdk has no aarch64 "
            + "build in this package");
    }

    @Test
    void aLibraryThatDoesNotLoadIsJavaWithTheLoadersCause() {
        EngineChoice c = choose("bluefield2", FakeProbe.SPDK_UNLOADABLE);
        assertThat(c.engine()).isEqualTo(Engines.JAVA);
        assertThat(c.line()).startsWith("engine: java (engine spdk cannot run here: native library nvmf4j_spdk could "
            + "not be loaded: ").contains("libibverbs.so.1: cannot open shared object file")
            .endsWith("; the profile runs spdk where it can)");
    }

    @Test
    void aKernelWithoutTwoMebibyteHugepagesIsJavaEvenWithTheLibrary() throws Exception {
        // a 64 KiB-page arm64 kernel: its huge pages are 512 MiB, no 2 MiB size
        Files.delete(root.resolve("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"));
        EngineChoice c = choose("bluefield3", FakeProbe.SPDK_LOADS);
        assertThat(c.engine()).isEqualTo(Engines.JAVA);
        assertThat(c.line()).isEqualTo("engine: java (engine spdk cannot run here: this kernel has no 2 MiB hugepages "
            + "(no /sys/kernel/mm/hugepages/hugepages-2048kB), which SPDK's memory takes; the profile runs spdk where "
            + "it can)");
    }

    @Test
    void anEngineTheConfigurationNamesWinsOverTheProfilesDefault() throws Exception {
        configured("{\"engine\": \"java\", \"cores\": 2}");
        EngineChoice c = choose("bluefield3", FakeProbe.SPDK_LOADS);
        assertThat(c.engine()).isEqualTo(Engines.JAVA);
        assertThat(c.runs()).isTrue();
        assertThat(c.line()).isEqualTo("engine: java (named in /var/lib/nvmf4j/config.json, which wins over the "
            + "profile's default (here: spdk))");

        configured("{\"engine\": \"spdk\"}");
        EngineChoice spdk = choose("bluefield3", FakeProbe.SPDK_LOADS);
        assertThat(spdk.engine()).isEqualTo(Engines.SPDK);
        assertThat(spdk.line()).isEqualTo("engine: spdk (named in /var/lib/nvmf4j/config.json, which wins over the "
            + "profile's default; libnvmf4j_spdk for aarch64 (SPDK v26.05) present and loads)");
    }

    @Test
    void aNamedEngineThatCannotRunHereIsStillTheOneWithItsCauseAndAFix() throws Exception {
        configured("{\"engine\": \"spdk\"}");
        EngineChoice c = choose("bluefield3", FakeProbe.SPDK_ABSENT);
        assertThat(c.engine()).as("never a silent fall-back").isEqualTo(Engines.SPDK);
        assertThat(c.runs()).isFalse();
        assertThat(c.line()).isEqualTo("engine: spdk (named in /var/lib/nvmf4j/config.json, which wins over the "
            + "profile's default (here: java); but " + FakeProbe.SPDK_ABSENT.spdkCause() + ")");
        assertThat(c.fix()).isEqualTo("name an engine that runs here in /var/lib/nvmf4j/config.json: \"engine\": "
            + "\"java\"");
    }

    @Test
    void aKeptConfigurationThatNamesNoEngineRunsTheDocumentsDefault() throws Exception {
        configured("{\"cores\": 2}");
        EngineChoice c = choose("bluefield3", FakeProbe.SPDK_LOADS);
        assertThat(c.engine()).isEqualTo(Engines.JAVA);
        assertThat(c.line()).isEqualTo("engine: java (/var/lib/nvmf4j/config.json, which setup keeps, names no engine: "
            + "the document's default; add \"engine\": \"spdk\" to it for the profile's default here)");
    }

    @Test
    void anUnreadableConfigurationLeavesTheProfilesChoiceAndSaysSo() throws Exception {
        configured("{\"engine\": ");
        EngineChoice c = choose("bluefield3", FakeProbe.SPDK_LOADS);
        assertThat(c.engine()).isEqualTo(Engines.SPDK);
        assertThat(c.line()).contains("; /var/lib/nvmf4j/config.json could not be read (")
            .endsWith("): an engine it names would win)");
    }

    @Test
    void aProfileWithoutADefaultEngineKeepsTheDocumentsWhateverTheLibrary() {
        Profile p = Profile.load("bluefield3");
        p.machine.engine = null; // as a profile for another machine that names no engine
        for (FakeProbe probe : new FakeProbe[] {FakeProbe.SPDK_LOADS, FakeProbe.SPDK_ABSENT}) {
            EngineChoice c = EngineChoice.choose(p, new MachineFacts(root), probe);
            assertThat(c.engine()).isEqualTo(Engines.JAVA);
            assertThat(c.line()).isEqualTo("engine: java (the profile's default)");
        }
    }

    @Test
    void underAnotherRootTheSpdkLibraryIsNotCheckedSoTheProfileRunsJava() throws Exception {
        EngineProbe probe = EngineProbe.of(new MachineFacts(root));
        EngineChoice c = choose("bluefield3", probe);
        assertThat(c.engine()).isEqualTo(Engines.JAVA);
        assertThat(c.line()).isEqualTo("engine: java (engine spdk not checked for the machine under " + root + ": its "
            + "library loads only on the machine itself (check there); the profile runs spdk where it can)");
        // a named spdk engine there is not a failure: it is not known
        configured("{\"engine\": \"spdk\"}");
        EngineChoice named = choose("bluefield3", probe);
        assertThat(named.engine()).isEqualTo(Engines.SPDK);
        assertThat(named.runs()).isTrue();
        assertThat(named.line()).contains("named in /var/lib/nvmf4j/config.json", "not checked for the machine under");
    }

    @Test
    void onThisMachineTheProbeIsTheEnginesOwnCheck() {
        MachineFacts here = new MachineFacts(Path.of("/"));
        EngineProbe probe = EngineProbe.of(here);
        assertThat(probe.onThisMachine()).isTrue();
        assertThat(probe.unavailabilityCause(Engines.SPDK)).isEqualTo(Engines.unavailabilityCause(Engines.SPDK));
        assertThat(probe.runsOn(Engines.SPDK)).isEqualTo(Engines.runsOn(Engines.SPDK));
        assertThat(probe.unavailabilityCause(Engines.JAVA)).isNull();
    }
}
