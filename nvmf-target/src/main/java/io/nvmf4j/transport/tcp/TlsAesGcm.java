package io.nvmf4j.transport.tcp;

import org.bouncycastle.tls.crypto.impl.TlsAEADCipherImpl;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;

/**
 * AES-GCM for Bouncy Castle's TLS record layer ({@code TlsAEADCipher}) on the JDK's cipher, initialised per record
 * with a {@link GCMParameterSpec}. Bouncy Castle's own JCA adapter ({@code JceAEADCipherImpl}) builds an
 * {@code AlgorithmParameters} object for every record (a provider look-up, an ASN.1 encoding and its parse); this
 * one hands the nonce to the cipher directly, so a record costs the JDK's {@code Cipher.init} and {@code doFinal}
 * and nothing of ours. Failures are what Bouncy Castle's adapter throws: an {@link IllegalStateException}, which its
 * record layer turns into a {@code bad_record_mac} alert.
 */
final class TlsAesGcm implements TlsAEADCipherImpl {
    private final Cipher cipher;
    private final int mode;
    private SecretKeySpec key;

    TlsAesGcm(boolean encrypting) throws GeneralSecurityException {
        this.cipher = Cipher.getInstance("AES/GCM/NoPadding");
        this.mode = encrypting ? Cipher.ENCRYPT_MODE : Cipher.DECRYPT_MODE;
    }

    @Override
    public void setKey(byte[] k, int off, int len) {
        key = new SecretKeySpec(k, off, len, "AES");
    }

    @Override
    public void init(byte[] nonce, int macSize) {
        try {
            cipher.init(mode, key, new GCMParameterSpec(macSize * 8, nonce));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM init: " + e.getMessage(), e);
        }
    }

    @Override
    public int getOutputSize(int inputLength) {
        return cipher.getOutputSize(inputLength);
    }

    @Override
    public int doFinal(byte[] additionalData, byte[] input, int inputOffset, int inputLength, byte[] output,
                       int outputOffset) {
        try {
            if (additionalData != null && additionalData.length > 0) {
                cipher.updateAAD(additionalData);
            }
            return cipher.doFinal(input, inputOffset, inputLength, output, outputOffset);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }
}
