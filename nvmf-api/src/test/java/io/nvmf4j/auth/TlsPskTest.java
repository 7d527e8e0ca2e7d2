package io.nvmf4j.auth;

import io.nvmf4j.auth.TlsPsk.Derivation;
import io.nvmf4j.auth.TlsPsk.Identity;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The PSK interchange format and the identity derivation, checked against the vectors of libnvme's own test
 * ({@code test/psk.c}: the export vectors, and the version 1 identities of both its derivations).
 */
class TlsPskTest {
    private static final byte[] KEY32 = HexFormat.of().parseHex(
        "5512DBB6737D0106F65975B773DFB011FFC344BCF442E2DD6D8BC4870B5D5B03");
    private static final byte[] KEY48 = HexFormat.of().parseHex(
        "5512DBB6737D0106F65975B773DFB011FFC344BCF442E2DD6D8BC4870B5D5B03FFC344BCF442E2DD6D8BC4870B5D5B03");
    private static final String HOST = "nqn.psk-test-host";
    private static final String SUB = "nqn.psk-test-subsys";

    @Test
    void interchangeFormatMatchesLibnvmeExport() {
        assertThat(TlsPsk.format(0, KEY32)).isEqualTo("NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:");
        assertThat(TlsPsk.format(1, KEY32)).isEqualTo("NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:");
        assertThat(TlsPsk.format(2, KEY48)).isEqualTo(
            "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:");
        assertThat(TlsPsk.parse(" NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:\n")
            .cipherHash()).isEqualTo(TlsPsk.SHA384);
    }

    @Test
    void version1IdentitiesMatchLibnvmeVectorsForBothDerivations() {
        TlsPsk k256 = TlsPsk.parse(TlsPsk.format(1, KEY32));
        TlsPsk k384 = TlsPsk.parse(TlsPsk.format(2, KEY48));
        // libnvme >= 1.16 (RFC 8446 HkdfLabel)
        assertThat(k256.identity(Derivation.RFC8446, 1, HOST, SUB))
            .isEqualTo("NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys iSbjiStwJ/1TrTvDlt2fjFmzvsytOJelidNnA+X5lEU=");
        assertThat(k384.identity(Derivation.RFC8446, 1, HOST, SUB)).isEqualTo("NVMe1R02 nqn.psk-test-host"
            + " nqn.psk-test-subsys QhW2+Rp6RzHlNtCslyRxMnwJ11tKKhz8JCAQpQ+XUD8f9td1VeH5h53yz2wKJG1a");
        // libnvme <= 1.15, its "compat" derivation since (nvme-cli 2.13)
        assertThat(k256.identity(Derivation.LIBNVME, 1, HOST, SUB))
            .isEqualTo("NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys 66GuqV08TsAGII39teWUfwQwizjv06Jy8jOcX3NAAzM=");
        assertThat(k384.identity(Derivation.LIBNVME, 1, HOST, SUB)).isEqualTo("NVMe1R02 nqn.psk-test-host"
            + " nqn.psk-test-subsys RsKmYJ3nAn1ApjjMloJFbAkLPivONDAX/xW327YBUsn2eGShXSjCZvBaOxscLqmz");
        assertThat(k256.identity(Derivation.LIBNVME, 0, HOST, SUB)).isEqualTo("NVMe0R01 nqn.psk-test-host nqn.psk-test-subsys");
    }

    @Test
    void tlsPskFollowsTheIdentity() {
        TlsPsk k = TlsPsk.parse(TlsPsk.format(1, KEY32));
        Identity v0 = Identity.parse(k.identity(Derivation.LIBNVME, 0, HOST, SUB));
        Identity v1rfc = Identity.parse(k.identity(Derivation.RFC8446, 1, HOST, SUB));
        Identity v1old = Identity.parse(k.identity(Derivation.LIBNVME, 1, HOST, SUB));
        byte[] a = k.tlsPsk(Derivation.LIBNVME, v0);
        byte[] b = k.tlsPsk(Derivation.RFC8446, v0);
        assertThat(a).hasSize(32);
        assertThat(Arrays.equals(a, b)).as("the two derivations give different keys").isFalse();
        // a version 1 digest shows the derivation whatever the configured one
        assertThat(k.tlsPsk(Derivation.LIBNVME, v1rfc)).isEqualTo(k.tlsPsk(Derivation.RFC8446, v1rfc)).isNotNull();
        assertThat(k.tlsPsk(Derivation.LIBNVME, v1old)).isNotEqualTo(k.tlsPsk(Derivation.LIBNVME, v1rfc));
        // a wrong digest, the other hash, another host: no key
        assertThat(k.tlsPsk(Derivation.LIBNVME, Identity.parse("NVMe1R01 " + HOST + " " + SUB + " AAAA"))).isNull();
        assertThat(k.tlsPsk(Derivation.LIBNVME, Identity.parse("NVMe0R02 " + HOST + " " + SUB))).isNull();
        assertThat(k.tlsPsk(Derivation.LIBNVME, Identity.parse("NVMe0R01 nqn.other " + SUB))).isNotEqualTo(a);
    }

    @Test
    void identitiesThatAreNotAcceptedParseToNull() {
        assertThat(Identity.parse("NVMe0G01 h s")).as("generated PSKs").isNull();
        assertThat(Identity.parse("NVMe0R03 h s")).isNull();
        assertThat(Identity.parse("NVMe0R01 h")).isNull();
        assertThat(Identity.parse("NVMe0R01 h s d")).isNull();
        assertThat(Identity.parse("NVMe1R01 h s")).isNull();
        assertThat(Identity.parse("NVMe2R01 h s d")).isNull();
        assertThat(Identity.parse("psk-identity")).isNull();
        assertThat(Identity.parse("NVMe1R02 h s d")).isEqualTo(new Identity("NVMe1R02 h s d", 1, 2, "h", "s", "d"));
    }

    @Test
    void badKeysAreRefusedWithoutShowingThem() {
        String good = TlsPsk.format(1, KEY32);
        assertThatThrownBy(() -> TlsPsk.parse("DHHC-1:01:abc:")).hasMessageContaining("not an NVMe TLS PSK");
        assertThatThrownBy(() -> TlsPsk.parse(good.replace(":01:", ":03:"))).hasMessageContaining("hash 3");
        assertThatThrownBy(() -> TlsPsk.parse(good.replace(":01:", ":02:"))).hasMessageContaining("32 key bytes with hash 2");
        assertThatThrownBy(() -> TlsPsk.parse(good.replace("VRLb", "VRLc"))).hasMessageContaining("CRC-32 mismatch")
            .hasMessageNotContaining("VRL");
        assertThatThrownBy(() -> TlsPsk.parse(good.replace("VRLb", "V%Lb"))).hasMessageContaining("base64");
        assertThat(TlsPsk.parse(good).toString()).doesNotContain("VRL");
    }
}
