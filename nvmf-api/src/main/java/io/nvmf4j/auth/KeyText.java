package io.nvmf4j.auth;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.CRC32;

/**
 * The text form DH-HMAC-CHAP keys (DHHC-1) and NVMe/TCP TLS PSKs (NVMeTLSkey-1) share: {@code <prefix><hh>:<base64 of
 * key || crc32>:}, the CRC-32 of the key little-endian after it. Messages name the kind of key, never the key.
 */
final class KeyText {
    private KeyText() {
    }

    /** The two-hex-digit hash and the decoded bytes (key and CRC) of {@code text} after its prefix. */
    record Decoded(int hash, byte[] raw) {
        /** Bytes before the CRC. */
        int keyLength() {
            return Math.max(raw.length - 4, 0);
        }

        /** The key, after checking its CRC-32. */
        byte[] key(String what) {
            int len = keyLength();
            CRC32 crc = new CRC32();
            crc.update(raw, 0, len);
            long stored = (raw[len] & 0xFFL) | (raw[len + 1] & 0xFFL) << 8 | (raw[len + 2] & 0xFFL) << 16
                | (raw[len + 3] & 0xFFL) << 24;
            if (stored != crc.getValue()) {
                throw new IllegalArgumentException(what + ": CRC-32 mismatch (the key is damaged or mistyped)");
            }
            return Arrays.copyOf(raw, len);
        }
    }

    /**
     * Splits {@code text} (surrounding white space allowed): IllegalArgumentException {@code notThis} when it is not
     * of the form, or naming the field that is wrong; hashes above {@code maxHash} are refused with {@code hashes}.
     */
    static Decoded decode(String text, String prefix, String what, String notThis, int maxHash, String hashes) {
        String t = text.strip();
        if (!t.startsWith(prefix) || t.length() < prefix.length() + 4 || t.charAt(prefix.length() + 2) != ':'
            || !t.endsWith(":")) {
            throw new IllegalArgumentException(notThis);
        }
        int hash;
        try {
            hash = Integer.parseInt(t.substring(prefix.length(), prefix.length() + 2), 16);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": the hash field is not two hexadecimal digits");
        }
        if (hash > maxHash) {
            throw new IllegalArgumentException(what + ": hash " + hash + " is " + hashes);
        }
        try {
            return new Decoded(hash, Base64.getDecoder().decode(t.substring(prefix.length() + 3, t.length() - 1)
                .getBytes(StandardCharsets.US_ASCII)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + ": the key is not valid base64");
        }
    }

    /** {@code <prefix><hh>:<base64 of key || crc32>:}. */
    static String encode(String prefix, int hash, byte[] key) {
        CRC32 crc = new CRC32();
        crc.update(key);
        long c = crc.getValue();
        byte[] raw = Arrays.copyOf(key, key.length + 4);
        for (int i = 0; i < 4; i++) {
            raw[key.length + i] = (byte) (c >>> (8 * i));
        }
        return String.format("%s%02x:%s:", prefix, hash, Base64.getEncoder().encodeToString(raw));
    }
}
