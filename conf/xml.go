package conf

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// siteFiles are the files LoadDir reads, in order.
var siteFiles = []string{"core-site.xml", "hdfs-site.xml", "mapred-site.xml", "yarn-site.xml", "strata-site.xml"}

// SiteFiles returns the names of the files LoadDir reads, in the order it
// reads them: core-site.xml, hdfs-site.xml, mapred-site.xml, yarn-site.xml,
// strata-site.xml.
func SiteFiles() []string {
	return append([]string(nil), siteFiles...)
}

// ConfigDir returns the configuration directory to use: explicit (the
// --config option) if not empty, else $STRATA_CONF_DIR, else
// $HADOOP_CONF_DIR, else "" (no directory: defaults only).
func ConfigDir(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if d := os.Getenv("STRATA_CONF_DIR"); d != "" {
		return d
	}
	return os.Getenv("HADOOP_CONF_DIR")
}

// Load returns a Configuration holding the defaults overlaid with the site
// files in dir; see LoadDir.
func Load(dir string) (*Configuration, error) {
	c := New()
	if err := c.LoadDir(dir); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadDir loads, in order, those of the files SiteFiles names that exist
// in dir. An empty dir loads nothing; a dir that does not exist or is not
// a directory is an error, as is a site file that cannot be read or
// parsed (the files before it stay loaded).
func (c *Configuration) LoadDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("conf: configuration directory %s does not exist", dir)
		}
		return fmt.Errorf("conf: configuration directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("conf: configuration directory %s is not a directory", dir)
	}
	for _, name := range siteFiles {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := c.LoadFile(path); err != nil {
			return err
		}
	}
	return nil
}

// LoadFile loads the Hadoop configuration file at path; see LoadReader.
func (c *Configuration) LoadFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("conf: %w", err)
	}
	defer f.Close()
	return c.LoadReader(f, path)
}

// LoadReader loads a configuration resource in Hadoop's format from r;
// name (usually the file's path) names it in errors, warnings and Source:
//
//	<?xml version="1.0"?>
//	<configuration>
//	  <property>
//	    <name>dfs.replication</name>
//	    <value>2</value>
//	    <final>true</final>      <!-- optional -->
//	    <description>...</description>  <!-- optional, ignored -->
//	  </property>
//	  <property name="dfs.blocksize" value="64m"/>  <!-- Hadoop's short form -->
//	</configuration>
//
// Names are trimmed of white space; values are kept as written. A property
// whose key a previously loaded resource marked final is not changed
// (a warning is recorded). A property without a <value> sets nothing but
// may still mark its key final, as in Hadoop. The resource is parsed
// entirely before any of it is applied, so a malformed one (an error
// naming name and the problem, with its line) changes nothing. XInclude
// (<xi:include>) is not supported and is an error.
func (c *Configuration) LoadReader(r io.Reader, name string) error {
	props, warns, err := parseXML(r)
	if err != nil {
		return fmt.Errorf("conf: %s: %w", name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range warns {
		c.warnLocked(fmt.Sprintf("conf: %s: %s", name, w))
	}
	for _, p := range props {
		if p.hasValue {
			c.setLocked(p.name, p.value, name, true, p.final)
			continue
		}
		key := canonical(p.name)
		if _, ok := c.finals[key]; p.final && !ok && key != userNameKey {
			c.finals[key] = name
		}
	}
	return nil
}

// xmlProperty is one <property> of a resource.
type xmlProperty struct {
	name, value     string
	hasValue, final bool
}

// xmlParser parses one resource. Problems that do not stop the parse are
// collected in warns, each prefixed by its line.
type xmlParser struct {
	d     *xml.Decoder
	props []xmlProperty
	warns []string
}

// parseXML parses a resource in Hadoop's format.
func parseXML(r io.Reader) ([]xmlProperty, []string, error) {
	p := &xmlParser{d: xml.NewDecoder(r)}
	p.d.CharsetReader = charsetReader
	root := false
	for {
		tok, err := p.d.Token()
		if err == io.EOF {
			if !root {
				return nil, nil, errors.New("no <configuration> element")
			}
			return p.props, p.warns, nil
		}
		if err != nil {
			return nil, nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if root {
				return nil, nil, fmt.Errorf("line %d: element <%s> after </configuration>", p.line(), t.Name.Local)
			}
			if t.Name.Local != "configuration" {
				return nil, nil, fmt.Errorf("line %d: top-level element is <%s>, want <configuration>", p.line(), t.Name.Local)
			}
			root = true
			if err := p.configuration(); err != nil {
				return nil, nil, err
			}
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, nil, fmt.Errorf("line %d: text outside <configuration>", p.line())
			}
		}
	}
}

func (p *xmlParser) line() int {
	l, _ := p.d.InputPos()
	return l
}

func (p *xmlParser) warnf(format string, args ...any) {
	p.warns = append(p.warns, fmt.Sprintf("line %d: ", p.line())+fmt.Sprintf(format, args...))
}

// configuration parses the content of a <configuration> element up to its
// end. Hadoop allows nested <configuration> elements.
func (p *xmlParser) configuration() error {
	for {
		tok, err := p.d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nil
		case xml.StartElement:
			switch t.Name.Local {
			case "property":
				if err := p.property(t); err != nil {
					return err
				}
			case "configuration":
				if err := p.configuration(); err != nil {
					return err
				}
			case "include":
				return fmt.Errorf("line %d: <include> (XInclude) is not supported", p.line())
			default:
				p.warnf("ignoring element <%s> in <configuration> (want <property>)", t.Name.Local)
				if err := p.d.Skip(); err != nil {
					return err
				}
			}
		}
	}
}

// property parses a <property> element whose start is start.
func (p *xmlParser) property(start xml.StartElement) error {
	line := p.line()
	var prop xmlProperty
	for _, a := range start.Attr {
		switch a.Name.Local {
		case "name":
			prop.name = a.Value
		case "value":
			prop.value, prop.hasValue = a.Value, true
		case "final":
			prop.final = isTrue(a.Value)
		}
	}
	for {
		tok, err := p.d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			prop.name = strings.TrimSpace(prop.name)
			if prop.name == "" {
				p.warns = append(p.warns, fmt.Sprintf("line %d: ignoring <property> without a name", line))
				return nil
			}
			p.props = append(p.props, prop)
			return nil
		case xml.StartElement:
			switch t.Name.Local {
			case "name", "value", "final":
				s, err := p.text(t)
				if err != nil {
					return err
				}
				switch t.Name.Local {
				case "name":
					prop.name = s
				case "value":
					prop.value, prop.hasValue = s, true
				case "final":
					prop.final = isTrue(s)
				}
			case "description", "source", "tag":
				if err := p.d.Skip(); err != nil {
					return err
				}
			default:
				p.warnf("ignoring element <%s> in <property>", t.Name.Local)
				if err := p.d.Skip(); err != nil {
					return err
				}
			}
		}
	}
}

// text returns the text content of the element whose start is start,
// which must not contain elements.
func (p *xmlParser) text(start xml.StartElement) (string, error) {
	var b strings.Builder
	for {
		tok, err := p.d.Token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.EndElement:
			return b.String(), nil
		case xml.StartElement:
			return "", fmt.Errorf("line %d: unexpected element <%s> in <%s>", p.line(), t.Name.Local, start.Name.Local)
		}
	}
}

func isTrue(s string) bool {
	return strings.EqualFold(strings.TrimSpace(s), "true")
}

// charsetReader lets the decoder read the encodings Hadoop files declare
// besides UTF-8.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1":
		data, err := io.ReadAll(in)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(data))
		for _, b := range data {
			out = utf8.AppendRune(out, rune(b))
		}
		return bytes.NewReader(out), nil
	}
	return nil, fmt.Errorf("unsupported encoding %q", label)
}

// WriteXML writes the explicitly set keys (see Keys) to w in Hadoop's
// format, which LoadReader reads back: a value with a final mark is
// written final, and each property carries its source. Text XML cannot
// hold (invalid UTF-8, most control characters) is written as U+FFFD.
// WriteXMLFile writes c as a Hadoop site file at path (WriteXML).
func (c *Configuration) WriteXMLFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := c.WriteXML(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (c *Configuration) WriteXML(w io.Writer) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	bw := bufio.NewWriter(w)
	bw.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<configuration>\n")
	for _, k := range c.keysLocked() {
		bw.WriteString("<property><name>")
		xml.EscapeText(bw, []byte(k))
		bw.WriteString("</name><value>")
		xml.EscapeText(bw, []byte(c.vals[k]))
		bw.WriteString("</value>")
		if _, ok := c.finals[k]; ok {
			bw.WriteString("<final>true</final>")
		}
		bw.WriteString("<source>")
		xml.EscapeText(bw, []byte(c.sources[k]))
		bw.WriteString("</source></property>\n")
	}
	bw.WriteString("</configuration>\n")
	return bw.Flush()
}
