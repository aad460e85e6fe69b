// A durak-ref bot on the JVM (run as `java JavaBot.java`: the source launcher compiles
// it in memory). It plays the first legal action. Its own small msgpack reader and
// writer cover what the protocol sends (protocol/SPEC.md sections 2-3). The point is the
// JVM under the sandbox's seccomp filter: its threads (GC, JIT, the compiler the source
// launcher runs), futexes and mappings must all work there.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

public class JavaBot {
    static DataInputStream in;

    static Object read() throws IOException {
        int b = in.readUnsignedByte();
        if (b <= 0x7f) return (long) b;
        if (b >= 0xe0) return (long) (byte) b;
        if ((b & 0xf0) == 0x80) return map(b & 0x0f);
        if ((b & 0xf0) == 0x90) return list(b & 0x0f);
        if ((b & 0xe0) == 0xa0) return str(b & 0x1f);
        switch (b) {
            case 0xc0: return null;
            case 0xc2: return false;
            case 0xc3: return true;
            case 0xc4: return bytes(in.readUnsignedByte());
            case 0xc5: return bytes(in.readUnsignedShort());
            case 0xc6: return bytes(in.readInt());
            case 0xca: return (double) in.readFloat();
            case 0xcb: return in.readDouble();
            case 0xcc: return (long) in.readUnsignedByte();
            case 0xcd: return (long) in.readUnsignedShort();
            case 0xce: return in.readInt() & 0xffffffffL;
            case 0xcf: case 0xd3: return in.readLong();
            case 0xd0: return (long) in.readByte();
            case 0xd1: return (long) in.readShort();
            case 0xd2: return (long) in.readInt();
            case 0xd9: return str(in.readUnsignedByte());
            case 0xda: return str(in.readUnsignedShort());
            case 0xdb: return str(in.readInt());
            case 0xdc: return list(in.readUnsignedShort());
            case 0xdd: return list(in.readInt());
            case 0xde: return map(in.readUnsignedShort());
            case 0xdf: return map(in.readInt());
            default: throw new IOException("msgpack type 0x" + Integer.toHexString(b));
        }
    }

    static byte[] bytes(int n) throws IOException { byte[] b = new byte[n]; in.readFully(b); return b; }
    static String str(int n) throws IOException { return new String(bytes(n), StandardCharsets.UTF_8); }
    static List<Object> list(int n) throws IOException {
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(read());
        return out;
    }
    static Map<String, Object> map(int n) throws IOException {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) out.put((String) read(), read());
        return out;
    }

    static void write(DataOutputStream o, Object v) throws IOException {
        if (v == null) o.writeByte(0xc0);
        else if (v instanceof Boolean) o.writeByte((Boolean) v ? 0xc3 : 0xc2);
        else if (v instanceof Long) { o.writeByte(0xd3); o.writeLong((Long) v); }
        else if (v instanceof Double) { o.writeByte(0xcb); o.writeDouble((Double) v); }
        else if (v instanceof String) {
            byte[] b = ((String) v).getBytes(StandardCharsets.UTF_8);
            o.writeByte(0xdb); o.writeInt(b.length); o.write(b);
        } else if (v instanceof List) {
            List<?> l = (List<?>) v;
            o.writeByte(0xdd); o.writeInt(l.size());
            for (Object x : l) write(o, x);
        } else if (v instanceof Map) {
            Map<?, ?> m = (Map<?, ?>) v;
            o.writeByte(0xdf); o.writeInt(m.size());
            for (Map.Entry<?, ?> e : m.entrySet()) { write(o, e.getKey()); write(o, e.getValue()); }
        } else throw new IOException("cannot encode " + v.getClass());
    }

    static void send(OutputStream out, Map<String, Object> message) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        write(new DataOutputStream(body), message);
        DataOutputStream o = new DataOutputStream(out);
        o.writeInt(body.size());
        body.writeTo(o);
        o.flush();
    }

    public static void main(String[] args) throws Exception {
        in = new DataInputStream(new BufferedInputStream(System.in));
        OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out));
        while (true) {
            int size;
            try { size = in.readInt(); } catch (EOFException e) { return; }
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) read();
            Map<String, Object> reply = new LinkedHashMap<>();
            switch ((String) m.get("type")) {
                case "hello":
                    reply.put("type", "hello"); reply.put("protocol", 1L);
                    reply.put("name", "java"); reply.put("version", System.getProperty("java.version"));
                    send(out, reply);
                    break;
                case "request":
                    reply.put("type", "action"); reply.put("id", m.get("id"));
                    reply.put("action", ((List<?>) m.get("legal")).get(0));
                    send(out, reply);
                    break;
                case "ping":
                    reply.put("type", "pong"); reply.put("id", m.get("id"));
                    send(out, reply);
                    break;
                case "bye":
                    return;
                default:
                    break;
            }
        }
    }
}
