package io.nvmf4j.config;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LogTextTest {
    @Test
    void escapeLeavesPlainTextAloneAndNamesEveryControlCharacter() {
        assertThat(LogText.escape("nqn.2014-08.org.nvmexpress:uuid:1 /a b"))
            .isEqualTo("nqn.2014-08.org.nvmexpress:uuid:1 /a b");
        assertThat(LogText.escape("a\r\n\t\"\\\u0000\u001b\u007f\u0085\u2029z"))
            .isEqualTo("a\\r\\n\\t\\\"\\\\\\u0000\\u001b\\u007f\\u0085\\u2029z");
        assertThat(LogText.escape(null)).isNull();
        assertThat(LogText.quoted("a\nb")).isEqualTo("\"a\\nb\"");
    }

    @Test
    void controlCharactersAreC0DelAndC1() {
        assertThat(LogText.firstControl("nqn.2014-08.org.example:a b\u00a0é")).isEqualTo(-1);
        assertThat(LogText.firstControl("ab\u001f")).isEqualTo(2);
        assertThat(LogText.firstControl("a\u007f")).isEqualTo(1);
        assertThat(LogText.firstControl("\u0080")).isZero();
        assertThat(LogText.firstControl("a\u009f")).isEqualTo(1);
        assertThat(LogText.firstControl("a\u00a0")).isEqualTo(-1);
    }
}
