package io.nvmf4j.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** One canonical spelling per address; ambiguous spellings refused. */
class IpAddressesTest {
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "127.0.0.1, 127.0.0.1",
        "0.0.0.0, 0.0.0.0",
        "::1, ::1",
        "0:0:0:0:0:0:0:1, ::1",
        "0000:0000:0000:0000:0000:0000:0000:0001, ::1",
        "::, ::",
        "0:0:0:0:0:0:0:0, ::",
        "2001:DB8::42, 2001:db8::42",
        "2001:0db8:0000:0000:0000:0000:0000:0042, 2001:db8::42",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",     // the first of two equal runs (RFC 5952 4.2.3)
        "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",  // one zero group stays (4.2.2)
        "fe80:0:0:0:0:0:0:1, fe80::1",
        "1:0:0:2:0:0:0:3, 1:0:0:2::3"})                // the longest run
    void literalsAreCanonicalised(String given, String canonical) {
        assertThat(IpAddresses.canonical(given)).isEqualTo(canonical);
        assertThat(IpAddresses.problem(given)).isNull();
        assertThat(new ListenerConfig("tcp", given, 4420).address).as("stored canonical").isEqualTo(canonical);
        assertThat(new ReferralConfig("tcp", given, 8009).address).isEqualTo(canonical);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "127.000.000.001|without leading zeros",
        "010.0.0.1|without leading zeros",
        "256.0.0.1|each part 0..255",
        "::ffff:127.0.0.1|write the IPv4-mapped address '::ffff:127.0.0.1' as 127.0.0.1",
        "localhost|no host names",
        "1.2.3|no host names",
        "fe80::1%lo|no host names",
        "::1::2|no host names"})
    void ambiguousOrNonLiteralsAreRefused(String given, String why) {
        assertThat(IpAddresses.canonical(given)).isNull();
        assertThat(IpAddresses.problem(given)).contains(why);
    }

    @Test
    void twoSpellingsOfOneListenerAreEqual() {
        assertThat(new ListenerConfig("tcp", "0:0:0:0:0:0:0:1", 4420)).isEqualTo(new ListenerConfig("tcp", "::1", 4420));
        TargetConfig c = ConfigStore.parse("{\"subsystems\": [{\"listeners\": [{\"address\": \"0:0:0:0:0:0:0:1\"}]}]}");
        assertThat(c.subsystems.get(0).listeners.get(0).address).as("parsed canonical").isEqualTo("::1");
        assertThat(ConfigStore.toJson(c)).contains("\"address\" : \"::1\"").doesNotContain("0:0:0:0");
    }

    @ParameterizedTest
    @ValueSource(strings = {"not an address"})
    void aNonLiteralIsKeptForTheValidatorToReport(String given) {
        assertThat(new ListenerConfig("tcp", given, 1).address).isEqualTo(given);
    }
}
