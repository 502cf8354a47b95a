package analyzer

import (
	"encoding/xml"
	"io"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Output    string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes one JUnit test case per check, so CI systems show each
// threshold as a test.
func (r *Report) WriteJUnit(w io.Writer) error {
	s := junitSuite{Name: "vrlog-analyze"}
	for _, c := range r.Checks {
		name := c.Name
		if c.Channel != "" {
			name += " " + c.Channel
		}
		if c.Metric != "" {
			name += " " + c.Metric
		}
		tc := junitCase{Name: name, Classname: "vrlog.analyze." + c.Name, Output: c.Message}
		if !c.Pass {
			tc.Failure = &junitFailure{Message: c.Message, Type: c.Name, Text: c.Message}
			s.Failures++
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
