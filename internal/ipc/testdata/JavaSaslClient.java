// A Hadoop IPC client made of the JDK's own SASL GSSAPI (what Hadoop's
// Java client uses, mutual authentication included) and hand-encoded
// protobuf: it authenticates with the ticket cache of the JAAS "client"
// entry, asks for the QOPs in args[2], sends the connection context and
// one "echo" call to the test protocol, and prints the user the server
// saw and the negotiated QOP. Used by sasl_test.go.
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.security.auth.Subject;
import javax.security.auth.kerberos.KerberosPrincipal;
import javax.security.auth.login.LoginContext;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;

public class JavaSaslClient {
    static final byte[] CLIENT_ID = new byte[16];

    static void varint(ByteArrayOutputStream o, long v) {
        while ((v & ~0x7FL) != 0) {
            o.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        o.write((int) v);
    }

    static void fieldVarint(ByteArrayOutputStream o, int f, long v) {
        varint(o, (f << 3));
        varint(o, v);
    }

    static void fieldBytes(ByteArrayOutputStream o, int f, byte[] b) {
        varint(o, (f << 3) | 2);
        varint(o, b.length);
        o.write(b, 0, b.length);
    }

    static void fieldString(ByteArrayOutputStream o, int f, String s) {
        fieldBytes(o, f, s.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] frame(byte[]... msgs) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (byte[] m : msgs) {
            varint(body, m.length);
            body.write(m, 0, m.length);
        }
        byte[] b = body.toByteArray();
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        o.write(b.length >>> 24);
        o.write(b.length >>> 16);
        o.write(b.length >>> 8);
        o.write(b.length);
        o.write(b, 0, b.length);
        return o.toByteArray();
    }

    static byte[] rpcHeader(int callId) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        fieldVarint(o, 1, 2); // RPC_PROTOCOL_BUFFER
        fieldVarint(o, 2, 0); // RPC_FINAL_PACKET
        fieldVarint(o, 3, ((long) callId << 1) ^ (callId >> 31)); // sint32
        fieldBytes(o, 4, CLIENT_ID);
        return o.toByteArray();
    }

    static byte[] sasl(int state, byte[] token, byte[] auth) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        fieldVarint(o, 2, state);
        if (token != null) fieldBytes(o, 3, token);
        if (auth != null) fieldBytes(o, 4, auth);
        return o.toByteArray();
    }

    // A decoded message: field number to values (Long or byte[]).
    static Map<Integer, List<Object>> parse(byte[] b) {
        Map<Integer, List<Object>> m = new HashMap<>();
        int[] pos = {0};
        while (pos[0] < b.length) {
            long key = readVarint(b, pos);
            int f = (int) (key >>> 3), wt = (int) (key & 7);
            Object v;
            if (wt == 0) {
                v = readVarint(b, pos);
            } else if (wt == 2) {
                int n = (int) readVarint(b, pos);
                byte[] x = new byte[n];
                System.arraycopy(b, pos[0], x, 0, n);
                pos[0] += n;
                v = x;
            } else {
                throw new IllegalStateException("wire type " + wt);
            }
            m.computeIfAbsent(f, k -> new ArrayList<>()).add(v);
        }
        return m;
    }

    static long readVarint(byte[] b, int[] pos) {
        long v = 0;
        for (int shift = 0; ; shift += 7) {
            int c = b[pos[0]++] & 0xff;
            v |= (long) (c & 0x7f) << shift;
            if ((c & 0x80) == 0) return v;
        }
    }

    static List<byte[]> delimited(byte[] frame) {
        List<byte[]> out = new ArrayList<>();
        int[] pos = {0};
        while (pos[0] < frame.length) {
            int n = (int) readVarint(frame, pos);
            byte[] x = new byte[n];
            System.arraycopy(frame, pos[0], x, 0, n);
            pos[0] += n;
            out.add(x);
        }
        return out;
    }

    static byte[] readFrame(DataInputStream in) throws Exception {
        int n = in.readInt();
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    static String str(Map<Integer, List<Object>> m, int f) {
        List<Object> v = m.get(f);
        return v == null ? null : new String((byte[]) v.get(0), StandardCharsets.UTF_8);
    }

    static long num(Map<Integer, List<Object>> m, int f) {
        List<Object> v = m.get(f);
        return v == null ? 0 : (Long) v.get(0);
    }

    // check fails on a non-SUCCESS response header.
    static void check(Map<Integer, List<Object>> hdr) {
        if (num(hdr, 2) != 0) {
            System.out.println("error " + str(hdr, 4) + ": " + str(hdr, 5));
            System.exit(3);
        }
    }

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String qops = args[2];
        LoginContext lc = new LoginContext("client");
        lc.login();
        Subject subject = lc.getSubject();
        String principal = subject.getPrincipals(KerberosPrincipal.class).iterator().next().getName();
        Subject.doAs(subject, (PrivilegedExceptionAction<Void>) () -> {
            run(host, port, qops, principal);
            return null;
        });
    }

    static void run(String host, int port, String qops, String principal) throws Exception {
        Socket sock = new Socket(host, port);
        DataOutputStream out = new DataOutputStream(sock.getOutputStream());
        DataInputStream in = new DataInputStream(sock.getInputStream());
        out.write(new byte[] {'h', 'r', 'p', 'c', 9, 0, (byte) 0xDF});
        out.write(frame(rpcHeader(-33), sasl(1, null, null)));
        out.flush();
        List<byte[]> neg = delimited(readFrame(in));
        check(parse(neg.get(0)));
        byte[] krb = null;
        for (Object a : parse(neg.get(1)).getOrDefault(4, new ArrayList<>())) {
            if ("KERBEROS".equals(str(parse((byte[]) a), 1))) krb = (byte[]) a;
        }
        if (krb == null) throw new IllegalStateException("no KERBEROS auth offered");
        Map<Integer, List<Object>> auth = parse(krb);
        Map<String, String> props = new HashMap<>();
        props.put(Sasl.QOP, qops);
        props.put(Sasl.SERVER_AUTH, "true");
        SaslClient sc = Sasl.createSaslClient(new String[] {"GSSAPI"}, null, str(auth, 3), str(auth, 4), props, null);
        byte[] tok = sc.hasInitialResponse() ? sc.evaluateChallenge(new byte[0]) : new byte[0];
        out.write(frame(rpcHeader(-33), sasl(2, tok, krb)));
        out.flush();
        while (true) {
            List<byte[]> r = delimited(readFrame(in));
            check(parse(r.get(0)));
            Map<Integer, List<Object>> m = parse(r.get(1));
            long state = num(m, 2);
            byte[] t = m.containsKey(3) ? (byte[]) m.get(3).get(0) : new byte[0];
            if (state == 0) {
                break;
            }
            if (state != 3) throw new IllegalStateException("SASL state " + state);
            byte[] resp = sc.evaluateChallenge(t);
            out.write(frame(rpcHeader(-33), sasl(4, resp == null ? new byte[0] : resp, null)));
            out.flush();
        }
        if (!sc.isComplete()) throw new IllegalStateException("SASL not complete");
        String qop = (String) sc.getNegotiatedProperty(Sasl.QOP);
        boolean wrap = !"auth".equals(qop);

        ByteArrayOutputStream ui = new ByteArrayOutputStream();
        fieldString(ui, 1, principal);
        ByteArrayOutputStream cc = new ByteArrayOutputStream();
        fieldBytes(cc, 2, ui.toByteArray());
        fieldString(cc, 3, "org.example.EchoProtocol");
        send(out, sc, wrap, frame(rpcHeader(-3), cc.toByteArray()));
        ByteArrayOutputStream rh = new ByteArrayOutputStream();
        fieldString(rh, 1, "echo");
        fieldString(rh, 2, "org.example.EchoProtocol");
        fieldVarint(rh, 3, 1);
        ByteArrayOutputStream req = new ByteArrayOutputStream();
        fieldString(req, 1, "hello from java");
        send(out, sc, wrap, frame(rpcHeader(0), rh.toByteArray(), req.toByteArray()));

        byte[] f = readFrame(in);
        List<byte[]> r = delimited(f);
        Map<Integer, List<Object>> hdr = parse(r.get(0));
        check(hdr);
        if (wrap) {
            if (num(hdr, 1) != 4294967263L) throw new IllegalStateException("reply not wrapped");
            byte[] t = (byte[]) parse(r.get(1)).get(3).get(0);
            byte[] inner = sc.unwrap(t, 0, t.length);
            byte[] body = new byte[inner.length - 4];
            System.arraycopy(inner, 4, body, 0, body.length);
            r = delimited(body);
            hdr = parse(r.get(0));
            check(hdr);
        }
        Map<Integer, List<Object>> resp = parse(r.get(1));
        System.out.println("echo=" + str(resp, 1) + " user=" + str(resp, 2) + " qop=" + qop);
        sock.close();
    }

    static void send(DataOutputStream out, SaslClient sc, boolean wrap, byte[] f) throws Exception {
        if (wrap) {
            byte[] t = sc.wrap(f, 0, f.length);
            f = frame(rpcHeader(-33), sasl(5, t, null));
        }
        out.write(f);
        out.flush();
    }
}
