package io.nvmf4j.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** What the validator says about a document it must refuse (the config tests' shared check). */
final class Refusals {
    private Refusals() {
    }

    /** The problems of {@code c}, one per line; fails the test when the document is accepted. */
    static String problems(TargetConfig c) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigValidator.validate(c));
        assertThat(e).as("refused").isNotNull();
        return String.join("\n", e.problems());
    }
}
