package io.nvmf4j.config;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The NVMe spec's NQN rules and the legacy opt-in. */
class NqnTest {
    @ParameterizedTest
    @ValueSource(strings = {
        "nqn.2026-11.io.nvmf4j:default",
        "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-000000000001",
        "nqn.2014-08.org.nvmexpress:uuid:3F1B4A52-8C1E-4D0A-9A57-00000000000A",
        "nqn.1992-01.com.example:storage.tape1.sys1.xyz",
        "nqn.2016-06.io.spdk:cnode1",
        "nqn.2026-12.a:x",
        "nqn.2026-12.x-1.b2:naïve name with spaces",   // the user part is any UTF-8
        "nqn.2026-12.io.nvmf4j:ä"})
    void specNamesAreAccepted(String nqn) {
        assertThat(Nqn.problem(nqn, false)).isNull();
        assertThat(Nqn.isValid(nqn)).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "blktests-subsystem-1|must be nqn.yyyy-mm.<reverse domain>:<name>",
        "nqn.|must be nqn.yyyy-mm",
        "nqn.test|must be nqn.yyyy-mm",
        "NQN.2026-11.io.nvmf4j:x|must be nqn.yyyy-mm",
        "nqn.26-11.io.nvmf4j:x|must be nqn.yyyy-mm",
        "nqn.2026-13.io.nvmf4j:x|the date yyyy-mm must be a real month, got '2026-13'",
        "nqn.2026-00.io.nvmf4j:x|real month",
        "nqn.0000-01.io.nvmf4j:x|real month",
        "nqn.2026-11.io.nvmf4j|must have a name after the reverse domain",
        "nqn.2026-11.io.nvmf4j:|must have a name after the reverse domain",
        "nqn.2026-11.1io.nvmf4j:x|bad label '1io'",
        "nqn.2026-11.io-.nvmf4j:x|bad label 'io-'",
        "nqn.2026-11.io..nvmf4j:x|bad label ''",
        "nqn.2026-11..io:x|bad label ''",
        "nqn.2026-11.io_x.nvmf4j:x|bad label 'io_x'",
        "nqn.2014-08.org.nvmexpress:uuid:not-a-uuid|must end in a UUID",
        "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000011|must end in a UUID",
        "nqn.2014-08.org.nvmexpress:uuid:3f1b4a528c1e4d0a9a57000000000001|must end in a UUID"})
    void nonSpecNamesAreRefusedWithTheRule(String nqn, String rule) {
        assertThat(Nqn.problem(nqn, false)).contains(rule);
    }

    @ParameterizedTest
    @ValueSource(ints = {63, 64})
    void domainLabelsHaveAtMost63Characters(int length) {
        String nqn = "nqn.2026-11.io." + "a".repeat(length) + ":x";
        assertThat(Nqn.problem(nqn, false) == null).isEqualTo(length <= 63);
    }

    @ParameterizedTest
    @CsvSource({"223,true", "224,false"})
    void atMost223BytesOfUtf8(int bytes, boolean ok) {
        String ascii = "nqn.2026-11.io.nvmf4j:" + "x".repeat(bytes - 22);
        assertThat(Nqn.problem(ascii, false) == null).isEqualTo(ok);
        // two-byte characters count twice: 'ä' x 101 = 202 bytes
        String utf8 = "nqn.2026-11.io.nvmf4j:" + "ä".repeat((bytes - 22) / 2) + (bytes % 2 == 1 ? "x" : "");
        assertThat(Nqn.problem(utf8, false) == null).isEqualTo(ok);
        if (!ok) {
            assertThat(Nqn.problem(utf8, false)).isEqualTo("must be at most 223 bytes of UTF-8, got 224");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"blktests-subsystem-1", "testnqn", "nqn.test", "nqn.2026-13.io.x:y"})
    void legacyNamesNeedTheOptIn(String nqn) {
        assertThat(Nqn.problem(nqn, false)).contains("allowLegacyNqns");
        assertThat(Nqn.problem(nqn, true)).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"has space", "tab\there", "slash/name", "nul\u0000", ""})
    void legacyNamesStillHaveLimits(String nqn) {
        assertThat(Nqn.problem(nqn, true)).isNotNull();
    }

    /** C0, DEL and C1 characters are refused after the ':' too, and in legacy names, with the character named. */
    @ParameterizedTest
    @ValueSource(strings = {"\u0000", "\t", "\n", "\r", "\u001b", "\u007f", "\u0080", "\u0085", "\u009f"})
    void controlCharactersAreRefusedEverywhere(String control) {
        String nqn = "nqn.2026-11.io.nvmf4j:host" + control + "x";
        String rule = String.format("must not hold control characters (U+%04X at 26)", (int) control.charAt(0));
        assertThat(Nqn.problem(nqn, false)).startsWith(rule).doesNotContain(control);
        assertThat(Nqn.problem(nqn, true)).startsWith(rule);
        assertThat(Nqn.isValid(nqn)).isFalse();
        assertThat(Nqn.problem("legacy" + control, true)).startsWith("must not hold control characters (U+");
        assertThat(Nqn.problem("nqn.2026-11.io.nvmf4j:a\u00a0b", false)).as("NBSP is no control character").isNull();
    }

    @org.junit.jupiter.api.Test
    void legacyNamesStillHaveTheLengthLimitAndALoneSurrogateIsRefused() {
        assertThat(Nqn.problem("x".repeat(224), true)).isEqualTo("must be at most 223 bytes of UTF-8, got 224");
        assertThat(Nqn.problem("nqn.2026-11.io.nvmf4j:\uD800", false)).isEqualTo("is not valid Unicode text");
        assertThat(Nqn.problem(null, true)).isEqualTo("missing");
    }
}
