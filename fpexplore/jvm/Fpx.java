package fpexplore;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

/** Small helpers the fpexplore worker calls: raw-bit transfer, plain Java loops, Random draws. */
public final class Fpx {
    private Fpx() {}

    /** An NDArray holding exactly these bytes (native byte order), shape and data type. */
    public static NDArray fromBytes(NDManager manager, byte[] raw, long[] shape, String dtype) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(raw.length).order(ByteOrder.nativeOrder());
        buffer.put(raw);
        buffer.rewind();
        return manager.create(buffer, new Shape(shape), DataType.valueOf(dtype.toUpperCase()));
    }

    /** The array's bytes in native order (row-major). */
    public static byte[] toBytes(NDArray array) {
        return array.toByteArray();
    }

    /** Left-to-right sum with a float accumulator: {@code float s = 0; for (x) s += x;}. */
    public static float floatLoopSum(float[] values) {
        float s = 0f;
        for (float v : values) {
            s += v;
        }
        return s;
    }

    /** Left-to-right sum with a double accumulator. */
    public static double doubleLoopSum(double[] values) {
        double s = 0.0;
        for (double v : values) {
            s += v;
        }
        return s;
    }

    /** {@code n} draws of {@code new java.util.Random(seed).nextFloat()}. */
    public static float[] randomFloats(long seed, int n) {
        Random random = new Random(seed);
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            out[i] = random.nextFloat();
        }
        return out;
    }

    /** Sleep in Java (used to test that a worker killed mid-call leaves its caller intact). */
    public static void sleep(long millis) throws InterruptedException {
        Thread.sleep(millis);
    }
}
