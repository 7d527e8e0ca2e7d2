/*
 * What every nvmf4j JNI library does in JNI_OnLoad before it registers its natives: check that the Java
 * class it binds carries the ABI version the library was built for (static int ABI_VERSION). The C half of
 * NativeLibraryLoader's contract, on the include path of every module's JNI build (nvmf4j_rdma, nvmf4j_bdev,
 * nvmf4j_rbd, nvmf4j_spdk).
 */
#ifndef NVMF4J_JNI_H
#define NVMF4J_JNI_H

#include <jni.h>
#include <stdio.h>

/*
 * Finds cls_name and compares its ABI_VERSION with have. Returns the class, or NULL with an exception
 * pending: NoClassDefFoundError / NoSuchFieldError, or UnsatisfiedLinkError naming both versions.
 */
static inline jclass nvmf4j_jni_checked_class(JNIEnv *env, const char *lib, const char *cls_name, jint have)
{
	jclass cls = (*env)->FindClass(env, cls_name);
	if (!cls)
		return NULL;
	jfieldID fid = (*env)->GetStaticFieldID(env, cls, "ABI_VERSION", "I");
	if (!fid)
		return NULL;
	jint want = (*env)->GetStaticIntField(env, cls, fid);
	if (want != have) {
		char msg[160];
		snprintf(msg, sizeof(msg), "%s: native ABI version %d, Java expects %d", lib, (int)have, (int)want);
		(*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/UnsatisfiedLinkError"), msg);
		return NULL;
	}
	return cls;
}

#endif
