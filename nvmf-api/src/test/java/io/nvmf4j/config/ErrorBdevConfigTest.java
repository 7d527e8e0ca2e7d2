package io.nvmf4j.config;

import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.Test;

import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** The config rules for {@code error} bdevs, each refusal with the field and the reason. */
class ErrorBdevConfigTest {
    private static TargetConfig config(Consumer<BdevConfig> errorBdev) {
        TargetConfig c = new TargetConfig();
        c.bdevs.add(new BdevConfig("base0", "malloc", 512, 2048));
        BdevConfig e = new BdevConfig("err0", "error", 512, 0);
        e.base = "base0";
        errorBdev.accept(e);
        c.bdevs.add(e);
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = "nqn.2024-01.io.nvmf4j:err";
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "err0"));
        c.subsystems.add(s);
        return c;
    }

    private static String problems(TargetConfig c) {
        return Refusals.problems(c);
    }

    @Test
    void anErrorBdevOverAnEarlierBaseValidates() {
        assertThatCode(() -> ConfigValidator.validate(config(e -> { }))).doesNotThrowAnyException();
    }

    @Test
    void maxHeldCommandsIsBoundedAndForErrorBdevsOnly() {
        assertThatCode(() -> ConfigValidator.validate(config(e -> e.maxHeldCommands = 1))).doesNotThrowAnyException();
        assertThat(problems(config(e -> e.maxHeldCommands = 0)))
            .contains("bdevs[1].maxHeldCommands: must be 1..65536, got 0");
        assertThat(problems(config(e -> e.maxHeldCommands = 65537)))
            .contains("bdevs[1].maxHeldCommands: must be 1..65536, got 65537");
        TargetConfig onBase = config(e -> { });
        onBase.bdevs.get(0).maxHeldCommands = 4;
        assertThat(problems(onBase)).contains("bdevs[0].maxHeldCommands: only error bdevs hold commands");
    }

    @Test
    void baseMustBeListedBeforeAndNotBeAnErrorBdevOrWrappedTwice() {
        assertThat(problems(config(e -> e.base = null))).contains("bdevs[1].base: must name a bdev listed before");
        assertThat(problems(config(e -> e.base = "nope"))).contains("bdevs[1].base: must name a bdev listed before this one, got 'nope'");
        TargetConfig self = config(e -> e.base = "err0");
        assertThat(problems(self)).contains("bdevs[1].base: must name a bdev listed before");
        TargetConfig twice = config(e -> { });
        BdevConfig second = new BdevConfig("err1", "error", 512, 0);
        second.base = "base0";
        twice.bdevs.add(second);
        assertThat(problems(twice)).contains("bdevs[2].base: 'base0' is already wrapped by error bdev 'err0'");
        TargetConfig chain = config(e -> { });
        BdevConfig outer = new BdevConfig("err2", "error", 512, 0);
        outer.base = "err0";
        chain.bdevs.add(outer);
        assertThat(problems(chain)).contains("bdevs[2].base: 'err0' is an error bdev itself");
    }

    @Test
    void theBaseBacksNoNamespaceAndOnlyErrorBdevsHaveABase() {
        TargetConfig c = config(e -> { });
        c.subsystems.get(0).namespaces.add(new NamespaceConfig(2, "base0"));
        assertThat(problems(c)).contains("bdev 'base0' is the base of error bdev 'err0'; use 'err0'");
        TargetConfig m = config(e -> { });
        m.bdevs.get(0).base = "x";
        assertThat(problems(m)).contains("bdevs[0].base: only error bdevs wrap a base");
    }

    @Test
    void geometryAndFileSettingsBelongToTheBase() {
        assertThat(problems(config(e -> e.numBlocks = 10))).contains("bdevs[1].numBlocks: an error bdev has its base's size");
        assertThat(problems(config(e -> e.path = "/tmp/x"))).contains("belong to the base");
    }

    @Test
    void theSpdkEngineRefusesErrorBdevsSayingWhy() {
        TargetConfig c = config(e -> { });
        c.engine = Engines.SPDK;
        assertThat(problems(c)).contains("bdevs[1].type: error bdevs are java engine only");
    }
}
