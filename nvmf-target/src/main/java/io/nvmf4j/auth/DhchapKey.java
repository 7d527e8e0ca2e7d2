package io.nvmf4j.auth;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.CRC32;

/**
 * A DH-HMAC-CHAP secret in its DHHC-1 representation, {@code DHHC-1:<hh>:<base64 of key || crc32>:}, as nvme-cli's
 * {@code gen-dhchap-key} writes it and Linux's {@code nvme_auth_extract_key} reads it: {@code hh} is the hash the key
 * is transformed with before use (00 none, 01 SHA-256, 02 SHA-384, 03 SHA-512), the key is 32, 48 or 64 bytes and the
 * CRC-32 of the key follows it little-endian.
 */
public final class DhchapKey {
    private static final String PREFIX = "DHHC-1:";
    private final int hashId;
    private final byte[] secret;

    private DhchapKey(int hashId, byte[] secret) {
        this.hashId = hashId;
        this.secret = secret;
    }

    /** Parses the representation (surrounding white space allowed); the message says what is wrong, never the key. */
    public static DhchapKey parse(String text) {
        String t = text.strip();
        if (!t.startsWith(PREFIX) || t.length() < PREFIX.length() + 4 || t.charAt(PREFIX.length() + 2) != ':'
            || !t.endsWith(":")) {
            throw new IllegalArgumentException("not a DHHC-1 key (expected DHHC-1:<hh>:<base64>:)");
        }
        int hash;
        try {
            hash = Integer.parseInt(t.substring(PREFIX.length(), PREFIX.length() + 2), 16);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("DHHC-1 key: the hash field is not two hexadecimal digits");
        }
        if (hash > Dhchap.SHA512) {
            throw new IllegalArgumentException("DHHC-1 key: hash " + hash + " is none of 00 (none), 01, 02, 03");
        }
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(t.substring(PREFIX.length() + 3, t.length() - 1)
                .getBytes(StandardCharsets.US_ASCII));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("DHHC-1 key: the key is not valid base64");
        }
        int len = raw.length - 4;
        if (len != 32 && len != 48 && len != 64) {
            throw new IllegalArgumentException("DHHC-1 key: " + Math.max(len, 0)
                + " key bytes (must be 32, 48 or 64, followed by their CRC-32)");
        }
        CRC32 crc = new CRC32();
        crc.update(raw, 0, len);
        long stored = (raw[len] & 0xFFL) | (raw[len + 1] & 0xFFL) << 8 | (raw[len + 2] & 0xFFL) << 16
            | (raw[len + 3] & 0xFFL) << 24;
        if (stored != crc.getValue()) {
            throw new IllegalArgumentException("DHHC-1 key: CRC-32 mismatch (the key is damaged or mistyped)");
        }
        return new DhchapKey(hash, Arrays.copyOf(raw, len));
    }

    /** The representation of {@code secret} with transformation hash {@code hashId}. */
    public static String format(int hashId, byte[] secret) {
        CRC32 crc = new CRC32();
        crc.update(secret);
        long c = crc.getValue();
        byte[] raw = Arrays.copyOf(secret, secret.length + 4);
        for (int i = 0; i < 4; i++) {
            raw[secret.length + i] = (byte) (c >>> (8 * i));
        }
        return String.format("DHHC-1:%02x:%s:", hashId, Base64.getEncoder().encodeToString(raw));
    }

    /** Hash the key is transformed with before use: 0 none, else {@link Dhchap#SHA256}.. */
    public int hashId() {
        return hashId;
    }

    /** The key bytes (a copy). */
    public byte[] secret() {
        return secret.clone();
    }

    @Override
    public String toString() {
        return "DhchapKey[hash " + hashId + ", " + secret.length + " bytes]"; // never the key itself
    }
}
