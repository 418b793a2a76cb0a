// Package yamlerr rewords the YAML parser's errors for people. The parser
// already refuses the classic hostile inputs (alias bombs, nesting past
// 10,000 levels, bytes that are not UTF-8, a key given twice); its messages
// say what broke but not what is allowed, so Describe says both, in the
// project's error style.
package yamlerr
