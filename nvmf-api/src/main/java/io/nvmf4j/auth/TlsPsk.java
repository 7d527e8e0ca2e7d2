package io.nvmf4j.auth;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;

/**
 * A configured NVMe/TCP TLS PSK in the PSK interchange format (NVMe/TCP transport specification, 3.6.1.5), as
 * {@code nvme gen-tls-key} writes it: {@code NVMeTLSkey-1:<hh>:<base64 of key || crc32>:}, where {@code hh} is the hash
 * that turns the configured PSK into the retained PSK (00 none, 01 SHA-256, 02 SHA-384) and the key is 32 or 48 bytes
 * (01 only with 32, 02 only with 48), followed by the little-endian CRC-32 of the key.
 *
 * <p>The TLS PSK a host offers is derived from it as the NVMe/TCP specification (3.6.1.3, 3.6.1.4) says, in one of
 * two ways ({@link Derivation}), because the hosts out there disagree on HKDF-Expand-Label:
 * <ol>
 * <li>retained PSK = HKDF-Expand-Label(HKDF-Extract(0, configured), "HostNQN", hostnqn, L) with the key's hash; with
 *     hash 00 the configured PSK itself;</li>
 * <li>the cipher hash is the key's hash, or for 00 the one matching the key length (32: SHA-256, 48: SHA-384);</li>
 * <li>identity version 0: {@code "NVMe0R0<c> <hostnqn> <subnqn>"}; version 1 adds a digest:
 *     {@code "NVMe1R0<c> <hostnqn> <subnqn> <base64(HMAC(retained, hostnqn || ' ' || subnqn || ' ' ||
 *     "NVMe-over-Fabrics"))>"};</li>
 * <li>TLS PSK = HKDF-Expand-Label(HKDF-Extract(0, retained), "nvme-tls-psk", context, L) with the cipher hash, the
 *     context the identity itself (version 0) or {@code "0<c> " || digest} (version 1).</li>
 * </ol>
 * {@link Derivation#LIBNVME} is libnvme 1.x up to 1.15 ({@code derive_nvme_keys} in {@code src/nvme/linux.c}, what
 * nvme-cli 2.13's {@code check-tls-key --insert} / {@code gen-tls-key --insert} put into the kernel's {@code .nvme}
 * keyring for the Linux host and tlshd): the info is {@code L (u16 little-endian) || "tls13 " || label || context},
 * without RFC 8446's length bytes. {@link Derivation#RFC8446} is HkdfLabel as RFC 8446 defines it
 * ({@code L} big-endian, label and context each after a length byte): SPDK's host ({@code nvme_tcp_derive_*_psk})
 * and libnvme from 1.16 on (where the old one is the "compat" one).
 */
public final class TlsPsk {
    private static final String PREFIX = "NVMeTLSkey-1:";
    /** Cipher hash 1: TLS_AES_128_GCM_SHA256. */
    public static final int SHA256 = 1;
    /** Cipher hash 2: TLS_AES_256_GCM_SHA384. */
    public static final int SHA384 = 2;

    private final int hashId;
    private final byte[] configured;

    private TlsPsk(int hashId, byte[] configured) {
        this.hashId = hashId;
        this.configured = configured;
    }

    /** Parses the interchange format (surrounding white space allowed); the message says what is wrong, never the key. */
    public static TlsPsk parse(String text) {
        KeyText.Decoded d = KeyText.decode(text, PREFIX, "NVMe TLS PSK",
            "not an NVMe TLS PSK (expected NVMeTLSkey-1:<hh>:<base64>:)", SHA384,
            "none of 00 (none), 01 (SHA-256), 02 (SHA-384)");
        int len = d.keyLength();
        int hash = d.hash();
        if (hash == SHA256 && len != 32 || hash == SHA384 && len != 48 || len != 32 && len != 48) {
            throw new IllegalArgumentException("NVMe TLS PSK: " + len + " key bytes with hash " + hash
                + " (01 takes 32, 02 takes 48, 00 either, followed by their CRC-32)");
        }
        return new TlsPsk(hash, d.key("NVMe TLS PSK"));
    }

    /** The interchange format of {@code key} with retained-PSK hash {@code hashId} (as nvme gen-tls-key prints it). */
    public static String format(int hashId, byte[] key) {
        return KeyText.encode(PREFIX, hashId, key);
    }

    /** The hash of the TLS cipher suite this key goes with: {@link #SHA256} or {@link #SHA384}. */
    public int cipherHash() {
        return hashId != 0 ? hashId : configured.length == 32 ? SHA256 : SHA384;
    }

    /** The retained PSK for {@code hostnqn} (step 1). */
    public byte[] retained(Derivation d, String hostnqn) {
        if (hashId == 0) {
            return configured.clone();
        }
        return hkdf(d, hashId, configured, "HostNQN", hostnqn.getBytes(StandardCharsets.UTF_8), configured.length);
    }

    /** The PSK identity of version 0 or 1 that a host with this key offers to subsystem {@code subnqn}. */
    public String identity(Derivation d, int version, String hostnqn, String subnqn) {
        String head = "NVMe" + version + "R0" + cipherHash() + " " + hostnqn + " " + subnqn;
        return version == 0 ? head : head + " " + digest(retained(d, hostnqn), hostnqn, subnqn);
    }

    /**
     * The TLS PSK for {@code identity}, or null when this key does not produce that identity for its NQNs. A version 0
     * identity takes derivation {@code d}; a version 1 identity's digest shows which of the two the host used.
     */
    public byte[] tlsPsk(Derivation d, Identity identity) {
        if (identity.hash() != cipherHash()) {
            return null;
        }
        if (identity.version() == 0) {
            return hkdf(d, cipherHash(), retained(d, identity.hostnqn()), "nvme-tls-psk",
                identity.text().getBytes(StandardCharsets.UTF_8), configured.length);
        }
        for (Derivation e : new Derivation[] {d, d == Derivation.LIBNVME ? Derivation.RFC8446 : Derivation.LIBNVME}) {
            byte[] retained = retained(e, identity.hostnqn());
            String digest = digest(retained, identity.hostnqn(), identity.subnqn());
            if (digest.equals(identity.digest())) {
                byte[] context = ("0" + cipherHash() + " " + digest).getBytes(StandardCharsets.UTF_8);
                return hkdf(e, cipherHash(), retained, "nvme-tls-psk", context, configured.length);
            }
        }
        return null;
    }

    private String digest(byte[] retained, String hostnqn, String subnqn) {
        Mac mac = mac(cipherHash(), retained);
        mac.update((hostnqn + " " + subnqn + " NVMe-over-Fabrics").getBytes(StandardCharsets.UTF_8));
        return Base64.getEncoder().encodeToString(mac.doFinal());
    }

    /** HKDF-Extract with no salt, then HKDF-Expand-Label as {@code d} builds its info (see the class comment). */
    private static byte[] hkdf(Derivation d, int hash, byte[] ikm, String label, byte[] context, int length) {
        int hashLen = hash == SHA256 ? 32 : 48;
        byte[] prk = mac(hash, new byte[hashLen]).doFinal(ikm);
        byte[] fullLabel = ("tls13 " + label).getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream info = new ByteArrayOutputStream();
        if (d == Derivation.LIBNVME) {
            info.write(length & 0xFF);
            info.write(length >>> 8);
            info.writeBytes(fullLabel);
            info.writeBytes(context);
        } else {
            info.write(length >>> 8);
            info.write(length & 0xFF);
            info.write(fullLabel.length);
            info.writeBytes(fullLabel);
            info.write(context.length);
            info.writeBytes(context);
        }
        byte[] infoBytes = info.toByteArray();
        Mac mac = mac(hash, prk);
        byte[] out = new byte[length];
        byte[] t = new byte[0];
        for (int done = 0, i = 1; done < length; i++) {
            mac.update(t);
            mac.update(infoBytes);
            mac.update((byte) i);
            t = mac.doFinal();
            int n = Math.min(t.length, length - done);
            System.arraycopy(t, 0, out, done, n);
            done += n;
        }
        return out;
    }

    private static Mac mac(int hash, byte[] key) {
        String alg = hash == SHA256 ? "HmacSHA256" : "HmacSHA384";
        try {
            Mac m = Mac.getInstance(alg);
            m.init(new SecretKeySpec(key, alg));
            return m;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(alg + " is missing from this JDK", e);
        }
    }

    @Override
    public String toString() {
        return "TlsPsk[hash " + hashId + ", " + configured.length + " bytes]"; // never the key itself
    }

    /** How HKDF-Expand-Label's info is built (see the class comment). */
    public enum Derivation {
        /** libnvme up to 1.15 (nvme-cli 2.13 of Debian 13 and the Linux host it configures): the default. */
        LIBNVME("libnvme"),
        /** RFC 8446's HkdfLabel: SPDK's host, libnvme 1.16 and later. */
        RFC8446("rfc8446");

        private final String configName;

        Derivation(String configName) {
            this.configName = configName;
        }

        /** The name in the config ({@code libnvme}, {@code rfc8446}). */
        public String configName() {
            return configName;
        }

        /** The derivation named {@code name} in the config, null meaning the default; IllegalArgumentException else. */
        public static Derivation of(String name) {
            if (name == null) {
                return LIBNVME;
            }
            for (Derivation d : values()) {
                if (d.configName.equals(name)) {
                    return d;
                }
            }
            throw new IllegalArgumentException("must be libnvme or rfc8446, got " + name);
        }
    }

    /**
     * A PSK identity a host offered: {@code NVMe<v>R0<h> <hostnqn> <subnqn>[ <digest>]} with version 0 or 1, a
     * retained ({@code R}) PSK and hash 1 or 2. Generated PSKs ({@code G}, from DH-HMAC-CHAP secure channel
     * concatenation) are not accepted.
     */
    public record Identity(String text, int version, int hash, String hostnqn, String subnqn, String digest) {
        /** Parses {@code text}, or returns null when it is not such an identity. */
        public static Identity parse(String text) {
            String[] f = text.split(" ", -1);
            if (f.length < 3 || f[0].length() != 8 || !f[0].startsWith("NVMe") || f[0].charAt(5) != 'R'
                || f[0].charAt(6) != '0') {
                return null;
            }
            int version = f[0].charAt(4) - '0';
            int hash = f[0].charAt(7) - '0';
            if (hash != SHA256 && hash != SHA384 || f[1].isEmpty() || f[2].isEmpty()
                || !(version == 0 && f.length == 3 || version == 1 && f.length == 4 && !f[3].isEmpty())) {
                return null;
            }
            return new Identity(text, version, hash, f[1], f[2], version == 1 ? f[3] : null);
        }
    }
}
