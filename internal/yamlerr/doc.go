// Package yamlerr rewords the YAML parser's errors for people. The parser
// already refuses the classic hostile inputs (alias bombs, nesting past
// 10,000 levels, bytes that are not UTF-8, a key given twice); its messages
// say what broke but not what is allowed, so Describe says both, in the
// project's error style.
//
// It also measures a parsed document without expanding it: its nodes as
// written and as they stand for once its aliases are expanded
// (CountNodes), and refuses an object past MaxExpandedNodes, an alias bomb
// or far more data than any real object (CheckNodes). The input budget
// (internal/budget) charges every document by that count.
package yamlerr
