package io.nvmf4j.auth;


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
        KeyText.Decoded d = KeyText.decode(text, PREFIX, "DHHC-1 key", "not a DHHC-1 key (expected DHHC-1:<hh>:<base64>:)",
            Dhchap.SHA512, "none of 00 (none), 01, 02, 03");
        int len = d.keyLength();
        if (len != 32 && len != 48 && len != 64) {
            throw new IllegalArgumentException("DHHC-1 key: " + len
                + " key bytes (must be 32, 48 or 64, followed by their CRC-32)");
        }
        return new DhchapKey(d.hash(), d.key("DHHC-1 key"));
    }

    /** The representation of {@code secret} with transformation hash {@code hashId}. */
    public static String format(int hashId, byte[] secret) {
        return KeyText.encode(PREFIX, hashId, secret);
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
