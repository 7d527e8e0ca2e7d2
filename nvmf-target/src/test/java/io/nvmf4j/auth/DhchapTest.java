package io.nvmf4j.auth;

import io.nvmf4j.testhost.DhchapHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Known answers of the DH-HMAC-CHAP computations: the DHHC-1 representation and its CRC against nvme-cli's
 * {@code gen-dhchap-key} / {@code check-dhchap-key} (an independent implementation, libnvme's), the key
 * transformation against the keys nvme-cli transforms with {@code --hmac}, and the responses and augmented challenge
 * against OpenSSL's HMAC over the byte strings the specification defines. nvme-cli and openssl are on this
 * project's build machines; elsewhere those cross-checks are skipped (the tests say so), the rest runs.
 */
class DhchapTest {
    static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-000000000002";
    static final String SUBNQN = "nqn.2024-01.io.nvmf4j:it-restricted";

    static byte[] secret(int n) {
        byte[] s = new byte[n];
        for (int i = 0; i < n; i++) {
            s[i] = (byte) (i * 7 + 3);
        }
        return s;
    }

    @Test
    void formatAndParseRoundTrip() {
        for (int len : new int[]{32, 48, 64}) {
            for (int h = 0; h <= 3; h++) {
                DhchapKey k = DhchapKey.parse(DhchapKey.format(h, secret(len)));
                assertThat(k.hashId()).isEqualTo(h);
                assertThat(k.secret()).isEqualTo(secret(len));
            }
        }
        assertThat(DhchapKey.parse("  " + DhchapKey.format(1, secret(32)) + "\n").hashId()).isEqualTo(1);
    }

    @Test
    void badRepresentationsAreRefusedWithoutShowingTheKey() {
        String good = DhchapKey.format(0, secret(32));
        char[] damaged = good.toCharArray();
        damaged[12] = damaged[12] == 'A' ? 'B' : 'A';
        assertThatThrownBy(() -> DhchapKey.parse(new String(damaged))).hasMessageContaining("CRC-32 mismatch");
        assertThatThrownBy(() -> DhchapKey.parse("DHHC-1:04:" + good.substring(10))).hasMessageContaining("hash 4");
        assertThatThrownBy(() -> DhchapKey.parse("DHHC-2:00:" + good.substring(10))).hasMessageContaining("not a DHHC-1");
        assertThatThrownBy(() -> DhchapKey.parse("DHHC-1:00:!!!!:")).hasMessageContaining("base64");
        String shortKey = "DHHC-1:00:" + Base64.getEncoder().encodeToString(new byte[20]) + ":";
        assertThatThrownBy(() -> DhchapKey.parse(shortKey)).hasMessageContaining("16 key bytes");
        assertThat(DhchapKey.parse(good).toString()).doesNotContain(good.substring(10, 30));
    }

    /** nvme-cli writes the same representation for the same secret, and accepts ours; a bad CRC it refuses too. */
    @Test
    void nvmeCliAgreesOnTheRepresentationAndCrc() throws Exception {
        assumeTrue(onPath("nvme"), "nvme-cli is not installed here");
        for (int len : new int[]{32, 48, 64}) {
            String ours = DhchapKey.format(0, secret(len));
            String theirs = run("nvme", "gen-dhchap-key", "--secret=" + HexFormat.of().formatHex(secret(len)),
                "--key-length=" + len, "--hmac=0", "--nqn=" + HOSTNQN).strip();
            assertThat(theirs).isEqualTo(ours);
            assertThat(exit("nvme", "check-dhchap-key", "--key=" + ours)).as("nvme check-dhchap-key of ours").isZero();
        }
        String good = DhchapKey.format(0, secret(32));
        byte[] raw = Base64.getDecoder().decode(good.substring(10, good.length() - 1));
        raw[32] ^= 1;
        String badCrc = "DHHC-1:00:" + Base64.getEncoder().encodeToString(raw) + ":";
        assertThat(exit("nvme", "check-dhchap-key", "--key=" + badCrc)).as("nvme check-dhchap-key, bad CRC").isNotZero();
        assertThatThrownBy(() -> DhchapKey.parse(badCrc)).hasMessageContaining("CRC-32");
    }

    /**
     * {@code nvme gen-dhchap-key --hmac=h --nqn=N} stores HMAC_h(secret, N || "NVMe-over-Fabrics"), the transformation
     * Linux's nvme_auth_transform_key applies: ours gives the same bytes for each hash and key length.
     */
    @ParameterizedTest
    @CsvSource({"1,32", "2,48", "3,64"})
    void transformationMatchesNvmeCli(int hash, int len) throws Exception {
        assumeTrue(onPath("nvme"), "nvme-cli is not installed here");
        String theirs = run("nvme", "gen-dhchap-key", "--secret=" + HexFormat.of().formatHex(secret(len)),
            "--key-length=" + len, "--hmac=" + hash, "--nqn=" + HOSTNQN).strip();
        DhchapKey transformedByCli = DhchapKey.parse(theirs); // also checks nvme-cli's CRC with ours
        DhchapKey key = DhchapKey.parse(DhchapKey.format(hash, secret(len)));
        assertThat(Dhchap.transformKey(key, HOSTNQN)).isEqualTo(transformedByCli.secret());
        assertThat(Dhchap.transformKey(DhchapKey.parse(DhchapKey.format(0, secret(len))), HOSTNQN))
            .as("hash 0: the key itself").isEqualTo(secret(len));
    }

    /** R1, R2 and the augmented challenge against OpenSSL's HMAC of the strings the specification defines. */
    @ParameterizedTest
    @CsvSource({"1,sha256", "2,sha384", "3,sha512"})
    void responsesMatchOpenssl(int hash, String digest) throws Exception {
        assumeTrue(onPath("openssl"), "openssl is not installed here");
        int hl = Dhchap.hashLength(hash);
        byte[] key = secret(hl);
        byte[] c = Arrays.copyOfRange(secret(64), 64 - hl, 64);
        int seq = 0x89ABCDEF;
        int tid = 0xBEEF;
        byte[] r1Input = DhchapHost.concat(c, new byte[]{(byte) 0xEF, (byte) 0xCD, (byte) 0xAB, (byte) 0x89},
            new byte[]{(byte) 0xEF, (byte) 0xBE}, new byte[]{0}, ascii("HostHost"), ascii(HOSTNQN), new byte[]{0},
            ascii(SUBNQN));
        assertThat(Dhchap.hostResponse(hash, key, c, seq, tid, 0, HOSTNQN, SUBNQN))
            .isEqualTo(opensslHmac(digest, key, r1Input));
        byte[] r2Input = DhchapHost.concat(c, new byte[]{(byte) 0xEF, (byte) 0xCD, (byte) 0xAB, (byte) 0x89},
            new byte[]{(byte) 0xEF, (byte) 0xBE}, new byte[]{0}, ascii("Controller"), ascii(SUBNQN), new byte[]{0},
            ascii(HOSTNQN));
        assertThat(Dhchap.controllerResponse(hash, key, c, seq, tid, SUBNQN, HOSTNQN))
            .isEqualTo(opensslHmac(digest, key, r2Input));
        byte[] sessionKey = secret(256);
        byte[] hashedKey = opensslDigest(digest, sessionKey);
        assertThat(Dhchap.augmentedChallenge(hash, sessionKey, c)).isEqualTo(opensslHmac(digest, hashedKey, c));
    }

    /** The primes are RFC 7919's: safe primes of the stated size with 64 one bits at each end, and OpenSSL's. */
    @Test
    void ffdhePrimesAreRfc7919s() throws Exception {
        for (DhGroup g : DhGroup.values()) {
            if (g == DhGroup.NULL) {
                continue;
            }
            BigInteger p = g.prime();
            assertThat(p.bitLength()).isEqualTo(g.valueLength() * 8);
            BigInteger ones = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
            assertThat(p.and(ones)).isEqualTo(ones);
            assertThat(p.shiftRight(p.bitLength() - 64)).isEqualTo(ones);
            if (g.valueLength() <= 256) { // the larger ones take long to test; OpenSSL vouches for all below
                assertThat(p.isProbablePrime(20)).isTrue();
                assertThat(p.subtract(BigInteger.ONE).shiftRight(1).isProbablePrime(20)).isTrue();
            }
            if (onPath("openssl")) {
                String asn1 = run("sh", "-c", "openssl genpkey -genparam -algorithm DH -pkeyopt group:"
                    + g.name().toLowerCase() + " | openssl asn1parse");
                assertThat(asn1).containsIgnoringCase(p.toString(16));
            }
        }
    }

    @Test
    void diffieHellmanAgreesAndRefusesValuesOutOfRange() {
        DhGroup g = DhGroup.FFDHE2048;
        var a = g.generate();
        var b = g.generate();
        byte[] ab = g.sharedSecret(a, g.publicValue(b));
        assertThat(ab).hasSize(256).isEqualTo(g.sharedSecret(b, g.publicValue(a)));
        byte[] one = new byte[256];
        one[255] = 1;
        assertThatThrownBy(() -> g.sharedSecret(a, one)).hasMessageContaining("out of range");
        byte[] pMinusOne = g.prime().subtract(BigInteger.ONE).toByteArray();
        assertThatThrownBy(() -> g.sharedSecret(a, Arrays.copyOfRange(pMinusOne, pMinusOne.length - 256,
            pMinusOne.length))).hasMessageContaining("out of range");
        assertThatThrownBy(() -> g.sharedSecret(a, new byte[255])).hasMessageContaining("out of range");
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] opensslHmac(String digest, byte[] key, byte[] data) throws Exception {
        return openssl(data, "dgst", "-" + digest, "-binary", "-mac", "HMAC", "-macopt",
            "hexkey:" + HexFormat.of().formatHex(key));
    }

    static byte[] opensslDigest(String digest, byte[] data) throws Exception {
        return openssl(data, "dgst", "-" + digest, "-binary");
    }

    private static byte[] openssl(byte[] input, String... args) throws Exception {
        Path in = Files.createTempFile("dhchap", ".bin");
        try {
            Files.write(in, input);
            List<String> cmd = new ArrayList<>(List.of("openssl"));
            cmd.addAll(List.of(args));
            cmd.add(in.toString());
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            byte[] out = p.getInputStream().readAllBytes();
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as("openssl exit").isZero();
            return out;
        } finally {
            Files.deleteIfExists(in);
        }
    }

    static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return Files.isExecutable(Path.of("/usr/sbin", tool));
    }

    static String run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("%s: %s", String.join(" ", cmd), out).isZero();
        return out;
    }

    static int exit(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return p.exitValue();
    }
}
