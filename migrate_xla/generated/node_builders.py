"""What the fast parse (migrate_xla/rule/tree.py) makes each of LibCST's node classes with: the
code ``tree.builder_code`` writes for it, and a function that takes the names that code reads and
returns it (compiled with this module, not when a run first makes the node).

Generated from the installed LibCST 1.9.0 by migrate_xla/generators/make_node_builders.py;
do not edit. Regenerate it after an upgrade of LibCST:

    .venv/bin/python -m migrate_xla.generators.make_node_builders  (or: make docs)
"""


def _Add(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _AddAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _And(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _AnnAssign(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _default4):
    def build(*, target, annotation, value=_default2, equal=_default3, semicolon=_default4):
        node = _new(_cls)
        _set0(node, target)
        _set1(node, annotation)
        _set2(node, value)
        _set3(node, equal)
        _set4(node, semicolon)
        return node
    return build


def _Annotation(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _factory2):
    def build(*, annotation, whitespace_before_indicator=_default1, whitespace_after_indicator=_MISSING):
        node = _new(_cls)
        _set0(node, annotation)
        _set1(node, whitespace_before_indicator)
        if whitespace_after_indicator is _MISSING: whitespace_after_indicator = _factory2()
        _set2(node, whitespace_after_indicator)
        return node
    return build


def _Arg(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _factory5, _set6, _factory6):
    def build(*, value, keyword=_default1, equal=_default2, comma=_default3, star=_default4, whitespace_after_star=_MISSING, whitespace_after_arg=_MISSING):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, keyword)
        _set2(node, equal)
        _set3(node, comma)
        _set4(node, star)
        if whitespace_after_star is _MISSING: whitespace_after_star = _factory5()
        _set5(node, whitespace_after_star)
        if whitespace_after_arg is _MISSING: whitespace_after_arg = _factory6()
        _set6(node, whitespace_after_arg)
        return node
    return build


def _AsName(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _factory2):
    def build(*, name, whitespace_before_as=_MISSING, whitespace_after_as=_MISSING):
        node = _new(_cls)
        _set0(node, name)
        if whitespace_before_as is _MISSING: whitespace_before_as = _factory1()
        _set1(node, whitespace_before_as)
        if whitespace_after_as is _MISSING: whitespace_after_as = _factory2()
        _set2(node, whitespace_after_as)
        return node
    return build


def _Assert(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _factory3, _set4, _default4):
    def build(*, test, msg=_default1, comma=_default2, whitespace_after_assert=_MISSING, semicolon=_default4):
        node = _new(_cls)
        _set0(node, test)
        _set1(node, msg)
        _set2(node, comma)
        if whitespace_after_assert is _MISSING: whitespace_after_assert = _factory3()
        _set3(node, whitespace_after_assert)
        _set4(node, semicolon)
        return node
    return build


def _Assign(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2):
    def build(*, targets, value, semicolon=_default2):
        node = _new(_cls)
        _set0(node, targets)
        _set1(node, value)
        _set2(node, semicolon)
        return node
    return build


def _AssignEqual(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _AssignTarget(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _factory2):
    def build(*, target, whitespace_before_equal=_MISSING, whitespace_after_equal=_MISSING):
        node = _new(_cls)
        _set0(node, target)
        if whitespace_before_equal is _MISSING: whitespace_before_equal = _factory1()
        _set1(node, whitespace_before_equal)
        if whitespace_after_equal is _MISSING: whitespace_after_equal = _factory2()
        _set2(node, whitespace_after_equal)
        return node
    return build


def _Asynchronous(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_after is _MISSING: whitespace_after = _factory0()
        _set0(node, whitespace_after)
        return node
    return build


def _Attribute(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _default4):
    def build(*, value, attr, dot=_default2, lpar=_default3, rpar=_default4):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, attr)
        _set2(node, dot)
        _set3(node, lpar)
        _set4(node, rpar)
        return node
    return build


def _AugAssign(*, _new, _cls, _MISSING, _set0, _set1, _set2, _set3, _default3):
    def build(*, target, operator, value, semicolon=_default3):
        node = _new(_cls)
        _set0(node, target)
        _set1(node, operator)
        _set2(node, value)
        _set3(node, semicolon)
        return node
    return build


def _Await(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _factory3):
    def build(*, expression, lpar=_default1, rpar=_default2, whitespace_after_await=_MISSING):
        node = _new(_cls)
        _set0(node, expression)
        _set1(node, lpar)
        _set2(node, rpar)
        if whitespace_after_await is _MISSING: whitespace_after_await = _factory3()
        _set3(node, whitespace_after_await)
        return node
    return build


def _BinaryOperation(*, _new, _cls, _MISSING, _set0, _set1, _set2, _set3, _default3, _set4, _default4):
    def build(*, left, operator, right, lpar=_default3, rpar=_default4):
        node = _new(_cls)
        _set0(node, left)
        _set1(node, operator)
        _set2(node, right)
        _set3(node, lpar)
        _set4(node, rpar)
        return node
    return build


def _BitAnd(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _BitAndAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _BitInvert(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_after is _MISSING: whitespace_after = _factory0()
        _set0(node, whitespace_after)
        return node
    return build


def _BitOr(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _BitOrAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _BitXor(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _BitXorAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _BooleanOperation(*, _new, _cls, _MISSING, _set0, _set1, _set2, _set3, _default3, _set4, _default4):
    def build(*, left, operator, right, lpar=_default3, rpar=_default4):
        node = _new(_cls)
        _set0(node, left)
        _set1(node, operator)
        _set2(node, right)
        _set3(node, lpar)
        _set4(node, rpar)
        return node
    return build


def _Break(*, _new, _cls, _MISSING, _set0, _default0):
    def build(*, semicolon=_default0):
        node = _new(_cls)
        _set0(node, semicolon)
        return node
    return build


def _Call(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _factory4, _set5, _factory5):
    def build(*, func, args=_default1, lpar=_default2, rpar=_default3, whitespace_after_func=_MISSING, whitespace_before_args=_MISSING):
        node = _new(_cls)
        _set0(node, func)
        _set1(node, args)
        _set2(node, lpar)
        _set3(node, rpar)
        if whitespace_after_func is _MISSING: whitespace_after_func = _factory4()
        _set4(node, whitespace_after_func)
        if whitespace_before_args is _MISSING: whitespace_before_args = _factory5()
        _set5(node, whitespace_before_args)
        return node
    return build


def _ClassDef(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _default5, _set6, _default6, _set7, _default7, _set8, _default8, _set9, _factory9, _set10, _factory10, _set11, _factory11, _set12, _default12, _set13, _factory13):
    def build(*, name, body, bases=_default2, keywords=_default3, decorators=_default4, lpar=_default5, rpar=_default6, leading_lines=_default7, lines_after_decorators=_default8, whitespace_after_class=_MISSING, whitespace_after_name=_MISSING, whitespace_before_colon=_MISSING, type_parameters=_default12, whitespace_after_type_parameters=_MISSING):
        node = _new(_cls)
        _set0(node, name)
        _set1(node, body)
        _set2(node, bases)
        _set3(node, keywords)
        _set4(node, decorators)
        _set5(node, lpar)
        _set6(node, rpar)
        _set7(node, leading_lines)
        _set8(node, lines_after_decorators)
        if whitespace_after_class is _MISSING: whitespace_after_class = _factory9()
        _set9(node, whitespace_after_class)
        if whitespace_after_name is _MISSING: whitespace_after_name = _factory10()
        _set10(node, whitespace_after_name)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory11()
        _set11(node, whitespace_before_colon)
        _set12(node, type_parameters)
        if whitespace_after_type_parameters is _MISSING: whitespace_after_type_parameters = _factory13()
        _set13(node, whitespace_after_type_parameters)
        return node
    return build


def _Colon(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _Comma(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _Comment(*, _new, _cls, _MISSING, _set0):
    def build(*, value):
        node = _new(_cls)
        _set0(node, value)
        return node
    return build


def _CompFor(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _factory5, _set6, _factory6, _set7, _factory7, _set8, _factory8):
    def build(*, target, iter, ifs=_default2, inner_for_in=_default3, asynchronous=_default4, whitespace_before=_MISSING, whitespace_after_for=_MISSING, whitespace_before_in=_MISSING, whitespace_after_in=_MISSING):
        node = _new(_cls)
        _set0(node, target)
        _set1(node, iter)
        _set2(node, ifs)
        _set3(node, inner_for_in)
        _set4(node, asynchronous)
        if whitespace_before is _MISSING: whitespace_before = _factory5()
        _set5(node, whitespace_before)
        if whitespace_after_for is _MISSING: whitespace_after_for = _factory6()
        _set6(node, whitespace_after_for)
        if whitespace_before_in is _MISSING: whitespace_before_in = _factory7()
        _set7(node, whitespace_before_in)
        if whitespace_after_in is _MISSING: whitespace_after_in = _factory8()
        _set8(node, whitespace_after_in)
        return node
    return build


def _CompIf(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _factory2):
    def build(*, test, whitespace_before=_MISSING, whitespace_before_test=_MISSING):
        node = _new(_cls)
        _set0(node, test)
        if whitespace_before is _MISSING: whitespace_before = _factory1()
        _set1(node, whitespace_before)
        if whitespace_before_test is _MISSING: whitespace_before_test = _factory2()
        _set2(node, whitespace_before_test)
        return node
    return build


def _Comparison(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3):
    def build(*, left, comparisons, lpar=_default2, rpar=_default3):
        node = _new(_cls)
        _set0(node, left)
        _set1(node, comparisons)
        _set2(node, lpar)
        _set3(node, rpar)
        return node
    return build


def _ComparisonTarget(*, _new, _cls, _MISSING, _set0, _set1):
    def build(*, operator, comparator):
        node = _new(_cls)
        _set0(node, operator)
        _set1(node, comparator)
        return node
    return build


def _ConcatenatedString(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _factory4):
    def build(*, left, right, lpar=_default2, rpar=_default3, whitespace_between=_MISSING):
        node = _new(_cls)
        _set0(node, left)
        _set1(node, right)
        _set2(node, lpar)
        _set3(node, rpar)
        if whitespace_between is _MISSING: whitespace_between = _factory4()
        _set4(node, whitespace_between)
        return node
    return build


def _Continue(*, _new, _cls, _MISSING, _set0, _default0):
    def build(*, semicolon=_default0):
        node = _new(_cls)
        _set0(node, semicolon)
        return node
    return build


def _Decorator(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _factory2, _set3, _factory3):
    def build(*, decorator, leading_lines=_default1, whitespace_after_at=_MISSING, trailing_whitespace=_MISSING):
        node = _new(_cls)
        _set0(node, decorator)
        _set1(node, leading_lines)
        if whitespace_after_at is _MISSING: whitespace_after_at = _factory2()
        _set2(node, whitespace_after_at)
        if trailing_whitespace is _MISSING: trailing_whitespace = _factory3()
        _set3(node, trailing_whitespace)
        return node
    return build


def _Del(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _default2):
    def build(*, target, whitespace_after_del=_MISSING, semicolon=_default2):
        node = _new(_cls)
        _set0(node, target)
        if whitespace_after_del is _MISSING: whitespace_after_del = _factory1()
        _set1(node, whitespace_after_del)
        _set2(node, semicolon)
        return node
    return build


def _Dict(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _factory2, _set3, _default3, _set4, _default4):
    def build(*, elements, lbrace=_MISSING, rbrace=_MISSING, lpar=_default3, rpar=_default4):
        node = _new(_cls)
        _set0(node, elements)
        if lbrace is _MISSING: lbrace = _factory1()
        _set1(node, lbrace)
        if rbrace is _MISSING: rbrace = _factory2()
        _set2(node, rbrace)
        _set3(node, lpar)
        _set4(node, rpar)
        return node
    return build


def _DictComp(*, _new, _cls, _MISSING, _set0, _set1, _set2, _set3, _factory3, _set4, _factory4, _set5, _default5, _set6, _default6, _set7, _factory7, _set8, _factory8):
    def build(*, key, value, for_in, lbrace=_MISSING, rbrace=_MISSING, lpar=_default5, rpar=_default6, whitespace_before_colon=_MISSING, whitespace_after_colon=_MISSING):
        node = _new(_cls)
        _set0(node, key)
        _set1(node, value)
        _set2(node, for_in)
        if lbrace is _MISSING: lbrace = _factory3()
        _set3(node, lbrace)
        if rbrace is _MISSING: rbrace = _factory4()
        _set4(node, rbrace)
        _set5(node, lpar)
        _set6(node, rpar)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory7()
        _set7(node, whitespace_before_colon)
        if whitespace_after_colon is _MISSING: whitespace_after_colon = _factory8()
        _set8(node, whitespace_after_colon)
        return node
    return build


def _DictElement(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _factory3, _set4, _factory4):
    def build(*, key, value, comma=_default2, whitespace_before_colon=_MISSING, whitespace_after_colon=_MISSING):
        node = _new(_cls)
        _set0(node, key)
        _set1(node, value)
        _set2(node, comma)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory3()
        _set3(node, whitespace_before_colon)
        if whitespace_after_colon is _MISSING: whitespace_after_colon = _factory4()
        _set4(node, whitespace_after_colon)
        return node
    return build


def _Divide(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _DivideAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _Dot(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _Element(*, _new, _cls, _MISSING, _set0, _set1, _default1):
    def build(*, value, comma=_default1):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, comma)
        return node
    return build


def _Ellipsis(*, _new, _cls, _MISSING, _set0, _default0, _set1, _default1):
    def build(*, lpar=_default0, rpar=_default1):
        node = _new(_cls)
        _set0(node, lpar)
        _set1(node, rpar)
        return node
    return build


def _Else(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _factory2):
    def build(*, body, leading_lines=_default1, whitespace_before_colon=_MISSING):
        node = _new(_cls)
        _set0(node, body)
        _set1(node, leading_lines)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory2()
        _set2(node, whitespace_before_colon)
        return node
    return build


def _EmptyLine(*, _new, _cls, _MISSING, _set0, _default0, _set1, _factory1, _set2, _default2, _set3, _factory3):
    def build(*, indent=_default0, whitespace=_MISSING, comment=_default2, newline=_MISSING):
        node = _new(_cls)
        _set0(node, indent)
        if whitespace is _MISSING: whitespace = _factory1()
        _set1(node, whitespace)
        _set2(node, comment)
        if newline is _MISSING: newline = _factory3()
        _set3(node, newline)
        return node
    return build


def _Equal(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _ExceptHandler(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _factory4, _set5, _factory5):
    def build(*, body, type=_default1, name=_default2, leading_lines=_default3, whitespace_after_except=_MISSING, whitespace_before_colon=_MISSING):
        node = _new(_cls)
        _set0(node, body)
        _set1(node, type)
        _set2(node, name)
        _set3(node, leading_lines)
        if whitespace_after_except is _MISSING: whitespace_after_except = _factory4()
        _set4(node, whitespace_after_except)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory5()
        _set5(node, whitespace_before_colon)
        return node
    return build


def _ExceptStarHandler(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _factory4, _set5, _factory5, _set6, _factory6):
    def build(*, body, type, name=_default2, leading_lines=_default3, whitespace_after_except=_MISSING, whitespace_after_star=_MISSING, whitespace_before_colon=_MISSING):
        node = _new(_cls)
        _set0(node, body)
        _set1(node, type)
        _set2(node, name)
        _set3(node, leading_lines)
        if whitespace_after_except is _MISSING: whitespace_after_except = _factory4()
        _set4(node, whitespace_after_except)
        if whitespace_after_star is _MISSING: whitespace_after_star = _factory5()
        _set5(node, whitespace_after_star)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory6()
        _set6(node, whitespace_before_colon)
        return node
    return build


def _Expr(*, _new, _cls, _MISSING, _set0, _set1, _default1):
    def build(*, value, semicolon=_default1):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, semicolon)
        return node
    return build


def _Finally(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _factory2):
    def build(*, body, leading_lines=_default1, whitespace_before_colon=_MISSING):
        node = _new(_cls)
        _set0(node, body)
        _set1(node, leading_lines)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory2()
        _set2(node, whitespace_before_colon)
        return node
    return build


def _Float(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2):
    def build(*, value, lpar=_default1, rpar=_default2):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, lpar)
        _set2(node, rpar)
        return node
    return build


def _FloorDivide(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _FloorDivideAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _For(*, _new, _cls, _MISSING, _set0, _set1, _set2, _set3, _default3, _set4, _default4, _set5, _default5, _set6, _factory6, _set7, _factory7, _set8, _factory8, _set9, _factory9):
    def build(*, target, iter, body, orelse=_default3, asynchronous=_default4, leading_lines=_default5, whitespace_after_for=_MISSING, whitespace_before_in=_MISSING, whitespace_after_in=_MISSING, whitespace_before_colon=_MISSING):
        node = _new(_cls)
        _set0(node, target)
        _set1(node, iter)
        _set2(node, body)
        _set3(node, orelse)
        _set4(node, asynchronous)
        _set5(node, leading_lines)
        if whitespace_after_for is _MISSING: whitespace_after_for = _factory6()
        _set6(node, whitespace_after_for)
        if whitespace_before_in is _MISSING: whitespace_before_in = _factory7()
        _set7(node, whitespace_before_in)
        if whitespace_after_in is _MISSING: whitespace_after_in = _factory8()
        _set8(node, whitespace_after_in)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory9()
        _set9(node, whitespace_before_colon)
        return node
    return build


def _FormattedString(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _default4):
    def build(*, parts, start=_default1, end=_default2, lpar=_default3, rpar=_default4):
        node = _new(_cls)
        _set0(node, parts)
        _set1(node, start)
        _set2(node, end)
        _set3(node, lpar)
        _set4(node, rpar)
        return node
    return build


def _FormattedStringExpression(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _factory3, _set4, _factory4, _set5, _default5):
    def build(*, expression, conversion=_default1, format_spec=_default2, whitespace_before_expression=_MISSING, whitespace_after_expression=_MISSING, equal=_default5):
        node = _new(_cls)
        _set0(node, expression)
        _set1(node, conversion)
        _set2(node, format_spec)
        if whitespace_before_expression is _MISSING: whitespace_before_expression = _factory3()
        _set3(node, whitespace_before_expression)
        if whitespace_after_expression is _MISSING: whitespace_after_expression = _factory4()
        _set4(node, whitespace_after_expression)
        _set5(node, equal)
        return node
    return build


def _FormattedStringText(*, _new, _cls, _MISSING, _set0):
    def build(*, value):
        node = _new(_cls)
        _set0(node, value)
        return node
    return build


def _From(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _factory2):
    def build(*, item, whitespace_before_from=_default1, whitespace_after_from=_MISSING):
        node = _new(_cls)
        _set0(node, item)
        _set1(node, whitespace_before_from)
        if whitespace_after_from is _MISSING: whitespace_after_from = _factory2()
        _set2(node, whitespace_after_from)
        return node
    return build


def _FunctionDef(*, _new, _cls, _MISSING, _set0, _set1, _set2, _set3, _default3, _set4, _default4, _set5, _default5, _set6, _default6, _set7, _default7, _set8, _factory8, _set9, _factory9, _set10, _factory10, _set11, _factory11, _set12, _default12, _set13, _factory13):
    def build(*, name, params, body, decorators=_default3, returns=_default4, asynchronous=_default5, leading_lines=_default6, lines_after_decorators=_default7, whitespace_after_def=_MISSING, whitespace_after_name=_MISSING, whitespace_before_params=_MISSING, whitespace_before_colon=_MISSING, type_parameters=_default12, whitespace_after_type_parameters=_MISSING):
        node = _new(_cls)
        _set0(node, name)
        _set1(node, params)
        _set2(node, body)
        _set3(node, decorators)
        _set4(node, returns)
        _set5(node, asynchronous)
        _set6(node, leading_lines)
        _set7(node, lines_after_decorators)
        if whitespace_after_def is _MISSING: whitespace_after_def = _factory8()
        _set8(node, whitespace_after_def)
        if whitespace_after_name is _MISSING: whitespace_after_name = _factory9()
        _set9(node, whitespace_after_name)
        if whitespace_before_params is _MISSING: whitespace_before_params = _factory10()
        _set10(node, whitespace_before_params)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory11()
        _set11(node, whitespace_before_colon)
        _set12(node, type_parameters)
        if whitespace_after_type_parameters is _MISSING: whitespace_after_type_parameters = _factory13()
        _set13(node, whitespace_after_type_parameters)
        return node
    return build


def _GeneratorExp(*, _new, _cls, _MISSING, _set0, _set1, _set2, _factory2, _set3, _factory3):
    def build(*, elt, for_in, lpar=_MISSING, rpar=_MISSING):
        node = _new(_cls)
        _set0(node, elt)
        _set1(node, for_in)
        if lpar is _MISSING: lpar = _factory2()
        _set2(node, lpar)
        if rpar is _MISSING: rpar = _factory3()
        _set3(node, rpar)
        return node
    return build


def _Global(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _default2):
    def build(*, names, whitespace_after_global=_MISSING, semicolon=_default2):
        node = _new(_cls)
        _set0(node, names)
        if whitespace_after_global is _MISSING: whitespace_after_global = _factory1()
        _set1(node, whitespace_after_global)
        _set2(node, semicolon)
        return node
    return build


def _GreaterThan(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _GreaterThanEqual(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _If(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _factory4, _set5, _factory5):
    def build(*, test, body, orelse=_default2, leading_lines=_default3, whitespace_before_test=_MISSING, whitespace_after_test=_MISSING):
        node = _new(_cls)
        _set0(node, test)
        _set1(node, body)
        _set2(node, orelse)
        _set3(node, leading_lines)
        if whitespace_before_test is _MISSING: whitespace_before_test = _factory4()
        _set4(node, whitespace_before_test)
        if whitespace_after_test is _MISSING: whitespace_after_test = _factory5()
        _set5(node, whitespace_after_test)
        return node
    return build


def _IfExp(*, _new, _cls, _MISSING, _set0, _set1, _set2, _set3, _default3, _set4, _default4, _set5, _factory5, _set6, _factory6, _set7, _factory7, _set8, _factory8):
    def build(*, test, body, orelse, lpar=_default3, rpar=_default4, whitespace_before_if=_MISSING, whitespace_after_if=_MISSING, whitespace_before_else=_MISSING, whitespace_after_else=_MISSING):
        node = _new(_cls)
        _set0(node, test)
        _set1(node, body)
        _set2(node, orelse)
        _set3(node, lpar)
        _set4(node, rpar)
        if whitespace_before_if is _MISSING: whitespace_before_if = _factory5()
        _set5(node, whitespace_before_if)
        if whitespace_after_if is _MISSING: whitespace_after_if = _factory6()
        _set6(node, whitespace_after_if)
        if whitespace_before_else is _MISSING: whitespace_before_else = _factory7()
        _set7(node, whitespace_before_else)
        if whitespace_after_else is _MISSING: whitespace_after_else = _factory8()
        _set8(node, whitespace_after_else)
        return node
    return build


def _Imaginary(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2):
    def build(*, value, lpar=_default1, rpar=_default2):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, lpar)
        _set2(node, rpar)
        return node
    return build


def _Import(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _factory2):
    def build(*, names, semicolon=_default1, whitespace_after_import=_MISSING):
        node = _new(_cls)
        _set0(node, names)
        _set1(node, semicolon)
        if whitespace_after_import is _MISSING: whitespace_after_import = _factory2()
        _set2(node, whitespace_after_import)
        return node
    return build


def _ImportAlias(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2):
    def build(*, name, asname=_default1, comma=_default2):
        node = _new(_cls)
        _set0(node, name)
        _set1(node, asname)
        _set2(node, comma)
        return node
    return build


def _ImportFrom(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _default5, _set6, _factory6, _set7, _factory7, _set8, _factory8):
    def build(*, module, names, relative=_default2, lpar=_default3, rpar=_default4, semicolon=_default5, whitespace_after_from=_MISSING, whitespace_before_import=_MISSING, whitespace_after_import=_MISSING):
        node = _new(_cls)
        _set0(node, module)
        _set1(node, names)
        _set2(node, relative)
        _set3(node, lpar)
        _set4(node, rpar)
        _set5(node, semicolon)
        if whitespace_after_from is _MISSING: whitespace_after_from = _factory6()
        _set6(node, whitespace_after_from)
        if whitespace_before_import is _MISSING: whitespace_before_import = _factory7()
        _set7(node, whitespace_before_import)
        if whitespace_after_import is _MISSING: whitespace_after_import = _factory8()
        _set8(node, whitespace_after_import)
        return node
    return build


def _ImportStar(*, _new, _cls, _MISSING):
    def build():
        node = _new(_cls)
        return node
    return build


def _In(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _IndentedBlock(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _default2, _set3, _default3):
    def build(*, body, header=_MISSING, indent=_default2, footer=_default3):
        node = _new(_cls)
        _set0(node, body)
        if header is _MISSING: header = _factory1()
        _set1(node, header)
        _set2(node, indent)
        _set3(node, footer)
        return node
    return build


def _Index(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2):
    def build(*, value, star=_default1, whitespace_after_star=_default2):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, star)
        _set2(node, whitespace_after_star)
        return node
    return build


def _Integer(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2):
    def build(*, value, lpar=_default1, rpar=_default2):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, lpar)
        _set2(node, rpar)
        return node
    return build


def _Is(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _IsNot(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1, _set2, _factory2):
    def build(*, whitespace_before=_MISSING, whitespace_between=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_between is _MISSING: whitespace_between = _factory1()
        _set1(node, whitespace_between)
        if whitespace_after is _MISSING: whitespace_after = _factory2()
        _set2(node, whitespace_after)
        return node
    return build


def _Lambda(*, _new, _cls, _MISSING, _set0, _set1, _set2, _factory2, _set3, _default3, _set4, _default4, _set5, _default5):
    def build(*, params, body, colon=_MISSING, lpar=_default3, rpar=_default4, whitespace_after_lambda=_default5):
        node = _new(_cls)
        _set0(node, params)
        _set1(node, body)
        if colon is _MISSING: colon = _factory2()
        _set2(node, colon)
        _set3(node, lpar)
        _set4(node, rpar)
        _set5(node, whitespace_after_lambda)
        return node
    return build


def _LazyImport(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _factory2, _set3, _factory3):
    def build(*, names, semicolon=_default1, whitespace_after_lazy=_MISSING, whitespace_after_import=_MISSING):
        node = _new(_cls)
        _set0(node, names)
        _set1(node, semicolon)
        if whitespace_after_lazy is _MISSING: whitespace_after_lazy = _factory2()
        _set2(node, whitespace_after_lazy)
        if whitespace_after_import is _MISSING: whitespace_after_import = _factory3()
        _set3(node, whitespace_after_import)
        return node
    return build


def _LazyImportFrom(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _default5, _set6, _factory6, _set7, _factory7, _set8, _factory8, _set9, _factory9):
    def build(*, module, names, relative=_default2, lpar=_default3, rpar=_default4, semicolon=_default5, whitespace_after_lazy=_MISSING, whitespace_after_from=_MISSING, whitespace_before_import=_MISSING, whitespace_after_import=_MISSING):
        node = _new(_cls)
        _set0(node, module)
        _set1(node, names)
        _set2(node, relative)
        _set3(node, lpar)
        _set4(node, rpar)
        _set5(node, semicolon)
        if whitespace_after_lazy is _MISSING: whitespace_after_lazy = _factory6()
        _set6(node, whitespace_after_lazy)
        if whitespace_after_from is _MISSING: whitespace_after_from = _factory7()
        _set7(node, whitespace_after_from)
        if whitespace_before_import is _MISSING: whitespace_before_import = _factory8()
        _set8(node, whitespace_before_import)
        if whitespace_after_import is _MISSING: whitespace_after_import = _factory9()
        _set9(node, whitespace_after_import)
        return node
    return build


def _LeftCurlyBrace(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_after is _MISSING: whitespace_after = _factory0()
        _set0(node, whitespace_after)
        return node
    return build


def _LeftParen(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_after is _MISSING: whitespace_after = _factory0()
        _set0(node, whitespace_after)
        return node
    return build


def _LeftShift(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _LeftShiftAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _LeftSquareBracket(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_after is _MISSING: whitespace_after = _factory0()
        _set0(node, whitespace_after)
        return node
    return build


def _LessThan(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _LessThanEqual(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _List(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _factory2, _set3, _default3, _set4, _default4):
    def build(*, elements, lbracket=_MISSING, rbracket=_MISSING, lpar=_default3, rpar=_default4):
        node = _new(_cls)
        _set0(node, elements)
        if lbracket is _MISSING: lbracket = _factory1()
        _set1(node, lbracket)
        if rbracket is _MISSING: rbracket = _factory2()
        _set2(node, rbracket)
        _set3(node, lpar)
        _set4(node, rpar)
        return node
    return build


def _ListComp(*, _new, _cls, _MISSING, _set0, _set1, _set2, _factory2, _set3, _factory3, _set4, _default4, _set5, _default5):
    def build(*, elt, for_in, lbracket=_MISSING, rbracket=_MISSING, lpar=_default4, rpar=_default5):
        node = _new(_cls)
        _set0(node, elt)
        _set1(node, for_in)
        if lbracket is _MISSING: lbracket = _factory2()
        _set2(node, lbracket)
        if rbracket is _MISSING: rbracket = _factory3()
        _set3(node, rbracket)
        _set4(node, lpar)
        _set5(node, rpar)
        return node
    return build


def _Match(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _factory3, _set4, _factory4, _set5, _factory5, _set6, _default6, _set7, _default7):
    def build(*, subject, cases, leading_lines=_default2, whitespace_after_match=_MISSING, whitespace_before_colon=_MISSING, whitespace_after_colon=_MISSING, indent=_default6, footer=_default7):
        node = _new(_cls)
        _set0(node, subject)
        _set1(node, cases)
        _set2(node, leading_lines)
        if whitespace_after_match is _MISSING: whitespace_after_match = _factory3()
        _set3(node, whitespace_after_match)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory4()
        _set4(node, whitespace_before_colon)
        if whitespace_after_colon is _MISSING: whitespace_after_colon = _factory5()
        _set5(node, whitespace_after_colon)
        _set6(node, indent)
        _set7(node, footer)
        return node
    return build


def _MatchAs(*, _new, _cls, _MISSING, _set0, _default0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _default5):
    def build(*, pattern=_default0, name=_default1, whitespace_before_as=_default2, whitespace_after_as=_default3, lpar=_default4, rpar=_default5):
        node = _new(_cls)
        _set0(node, pattern)
        _set1(node, name)
        _set2(node, whitespace_before_as)
        _set3(node, whitespace_after_as)
        _set4(node, lpar)
        _set5(node, rpar)
        return node
    return build


def _MatchCase(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _factory4, _set5, _factory5, _set6, _factory6, _set7, _factory7):
    def build(*, pattern, body, guard=_default2, leading_lines=_default3, whitespace_after_case=_MISSING, whitespace_before_if=_MISSING, whitespace_after_if=_MISSING, whitespace_before_colon=_MISSING):
        node = _new(_cls)
        _set0(node, pattern)
        _set1(node, body)
        _set2(node, guard)
        _set3(node, leading_lines)
        if whitespace_after_case is _MISSING: whitespace_after_case = _factory4()
        _set4(node, whitespace_after_case)
        if whitespace_before_if is _MISSING: whitespace_before_if = _factory5()
        _set5(node, whitespace_before_if)
        if whitespace_after_if is _MISSING: whitespace_after_if = _factory6()
        _set6(node, whitespace_after_if)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory7()
        _set7(node, whitespace_before_colon)
        return node
    return build


def _MatchClass(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _factory3, _set4, _factory4, _set5, _factory5, _set6, _default6, _set7, _default7):
    def build(*, cls, patterns=_default1, kwds=_default2, whitespace_after_cls=_MISSING, whitespace_before_patterns=_MISSING, whitespace_after_kwds=_MISSING, lpar=_default6, rpar=_default7):
        node = _new(_cls)
        _set0(node, cls)
        _set1(node, patterns)
        _set2(node, kwds)
        if whitespace_after_cls is _MISSING: whitespace_after_cls = _factory3()
        _set3(node, whitespace_after_cls)
        if whitespace_before_patterns is _MISSING: whitespace_before_patterns = _factory4()
        _set4(node, whitespace_before_patterns)
        if whitespace_after_kwds is _MISSING: whitespace_after_kwds = _factory5()
        _set5(node, whitespace_after_kwds)
        _set6(node, lpar)
        _set7(node, rpar)
        return node
    return build


def _MatchKeywordElement(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _factory3, _set4, _factory4):
    def build(*, key, pattern, comma=_default2, whitespace_before_equal=_MISSING, whitespace_after_equal=_MISSING):
        node = _new(_cls)
        _set0(node, key)
        _set1(node, pattern)
        _set2(node, comma)
        if whitespace_before_equal is _MISSING: whitespace_before_equal = _factory3()
        _set3(node, whitespace_before_equal)
        if whitespace_after_equal is _MISSING: whitespace_after_equal = _factory4()
        _set4(node, whitespace_after_equal)
        return node
    return build


def _MatchList(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _default4):
    def build(*, patterns, lbracket=_default1, rbracket=_default2, lpar=_default3, rpar=_default4):
        node = _new(_cls)
        _set0(node, patterns)
        _set1(node, lbracket)
        _set2(node, rbracket)
        _set3(node, lpar)
        _set4(node, rpar)
        return node
    return build


def _MatchMapping(*, _new, _cls, _MISSING, _set0, _default0, _set1, _factory1, _set2, _factory2, _set3, _default3, _set4, _factory4, _set5, _default5, _set6, _default6, _set7, _default7):
    def build(*, elements=_default0, lbrace=_MISSING, rbrace=_MISSING, rest=_default3, whitespace_before_rest=_MISSING, trailing_comma=_default5, lpar=_default6, rpar=_default7):
        node = _new(_cls)
        _set0(node, elements)
        if lbrace is _MISSING: lbrace = _factory1()
        _set1(node, lbrace)
        if rbrace is _MISSING: rbrace = _factory2()
        _set2(node, rbrace)
        _set3(node, rest)
        if whitespace_before_rest is _MISSING: whitespace_before_rest = _factory4()
        _set4(node, whitespace_before_rest)
        _set5(node, trailing_comma)
        _set6(node, lpar)
        _set7(node, rpar)
        return node
    return build


def _MatchMappingElement(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _factory3, _set4, _factory4):
    def build(*, key, pattern, comma=_default2, whitespace_before_colon=_MISSING, whitespace_after_colon=_MISSING):
        node = _new(_cls)
        _set0(node, key)
        _set1(node, pattern)
        _set2(node, comma)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory3()
        _set3(node, whitespace_before_colon)
        if whitespace_after_colon is _MISSING: whitespace_after_colon = _factory4()
        _set4(node, whitespace_after_colon)
        return node
    return build


def _MatchOr(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2):
    def build(*, patterns, lpar=_default1, rpar=_default2):
        node = _new(_cls)
        _set0(node, patterns)
        _set1(node, lpar)
        _set2(node, rpar)
        return node
    return build


def _MatchOrElement(*, _new, _cls, _MISSING, _set0, _set1, _default1):
    def build(*, pattern, separator=_default1):
        node = _new(_cls)
        _set0(node, pattern)
        _set1(node, separator)
        return node
    return build


def _MatchSequenceElement(*, _new, _cls, _MISSING, _set0, _set1, _default1):
    def build(*, value, comma=_default1):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, comma)
        return node
    return build


def _MatchSingleton(*, _new, _cls, _MISSING, _set0):
    def build(*, value):
        node = _new(_cls)
        _set0(node, value)
        return node
    return build


def _MatchStar(*, _new, _cls, _MISSING, _set0, _default0, _set1, _default1, _set2, _factory2):
    def build(*, name=_default0, comma=_default1, whitespace_before_name=_MISSING):
        node = _new(_cls)
        _set0(node, name)
        _set1(node, comma)
        if whitespace_before_name is _MISSING: whitespace_before_name = _factory2()
        _set2(node, whitespace_before_name)
        return node
    return build


def _MatchTuple(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _factory2):
    def build(*, patterns, lpar=_MISSING, rpar=_MISSING):
        node = _new(_cls)
        _set0(node, patterns)
        if lpar is _MISSING: lpar = _factory1()
        _set1(node, lpar)
        if rpar is _MISSING: rpar = _factory2()
        _set2(node, rpar)
        return node
    return build


def _MatchValue(*, _new, _cls, _MISSING, _set0):
    def build(*, value):
        node = _new(_cls)
        _set0(node, value)
        return node
    return build


def _MatrixMultiply(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _MatrixMultiplyAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _Minus(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_after is _MISSING: whitespace_after = _factory0()
        _set0(node, whitespace_after)
        return node
    return build


def _Module(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _default5, _set6, _default6):
    def build(*, body, header=_default1, footer=_default2, encoding=_default3, default_indent=_default4, default_newline=_default5, has_trailing_newline=_default6):
        node = _new(_cls)
        _set0(node, body)
        _set1(node, header)
        _set2(node, footer)
        _set3(node, encoding)
        _set4(node, default_indent)
        _set5(node, default_newline)
        _set6(node, has_trailing_newline)
        return node
    return build


def _Modulo(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _ModuloAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _Multiply(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _MultiplyAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _Name(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2):
    def build(*, value, lpar=_default1, rpar=_default2):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, lpar)
        _set2(node, rpar)
        return node
    return build


def _NameItem(*, _new, _cls, _MISSING, _set0, _set1, _default1):
    def build(*, name, comma=_default1):
        node = _new(_cls)
        _set0(node, name)
        _set1(node, comma)
        return node
    return build


def _NamedExpr(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _factory4, _set5, _factory5):
    def build(*, target, value, lpar=_default2, rpar=_default3, whitespace_before_walrus=_MISSING, whitespace_after_walrus=_MISSING):
        node = _new(_cls)
        _set0(node, target)
        _set1(node, value)
        _set2(node, lpar)
        _set3(node, rpar)
        if whitespace_before_walrus is _MISSING: whitespace_before_walrus = _factory4()
        _set4(node, whitespace_before_walrus)
        if whitespace_after_walrus is _MISSING: whitespace_after_walrus = _factory5()
        _set5(node, whitespace_after_walrus)
        return node
    return build


def _Newline(*, _new, _cls, _MISSING, _set0, _default0):
    def build(*, value=_default0):
        node = _new(_cls)
        _set0(node, value)
        return node
    return build


def _Nonlocal(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _default2):
    def build(*, names, whitespace_after_nonlocal=_MISSING, semicolon=_default2):
        node = _new(_cls)
        _set0(node, names)
        if whitespace_after_nonlocal is _MISSING: whitespace_after_nonlocal = _factory1()
        _set1(node, whitespace_after_nonlocal)
        _set2(node, semicolon)
        return node
    return build


def _Not(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_after is _MISSING: whitespace_after = _factory0()
        _set0(node, whitespace_after)
        return node
    return build


def _NotEqual(*, _new, _cls, _MISSING, _set0, _default0, _set1, _factory1, _set2, _factory2):
    def build(*, value=_default0, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        _set0(node, value)
        if whitespace_before is _MISSING: whitespace_before = _factory1()
        _set1(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory2()
        _set2(node, whitespace_after)
        return node
    return build


def _NotIn(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1, _set2, _factory2):
    def build(*, whitespace_before=_MISSING, whitespace_between=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_between is _MISSING: whitespace_between = _factory1()
        _set1(node, whitespace_between)
        if whitespace_after is _MISSING: whitespace_after = _factory2()
        _set2(node, whitespace_after)
        return node
    return build


def _Or(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _Param(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _default5, _set6, _factory6, _set7, _factory7):
    def build(*, name, annotation=_default1, equal=_default2, default=_default3, comma=_default4, star=_default5, whitespace_after_star=_MISSING, whitespace_after_param=_MISSING):
        node = _new(_cls)
        _set0(node, name)
        _set1(node, annotation)
        _set2(node, equal)
        _set3(node, default)
        _set4(node, comma)
        _set5(node, star)
        if whitespace_after_star is _MISSING: whitespace_after_star = _factory6()
        _set6(node, whitespace_after_star)
        if whitespace_after_param is _MISSING: whitespace_after_param = _factory7()
        _set7(node, whitespace_after_param)
        return node
    return build


def _ParamSlash(*, _new, _cls, _MISSING, _set0, _default0, _set1, _factory1):
    def build(*, comma=_default0, whitespace_after=_MISSING):
        node = _new(_cls)
        _set0(node, comma)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _ParamSpec(*, _new, _cls, _MISSING, _set0, _set1, _factory1):
    def build(*, name, whitespace_after_star=_MISSING):
        node = _new(_cls)
        _set0(node, name)
        if whitespace_after_star is _MISSING: whitespace_after_star = _factory1()
        _set1(node, whitespace_after_star)
        return node
    return build


def _ParamStar(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, comma=_MISSING):
        node = _new(_cls)
        if comma is _MISSING: comma = _factory0()
        _set0(node, comma)
        return node
    return build


def _Parameters(*, _new, _cls, _MISSING, _set0, _default0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _default5):
    def build(*, params=_default0, star_arg=_default1, kwonly_params=_default2, star_kwarg=_default3, posonly_params=_default4, posonly_ind=_default5):
        node = _new(_cls)
        _set0(node, params)
        _set1(node, star_arg)
        _set2(node, kwonly_params)
        _set3(node, star_kwarg)
        _set4(node, posonly_params)
        _set5(node, posonly_ind)
        return node
    return build


def _ParenthesizedWhitespace(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _default1, _set2, _default2, _set3, _factory3):
    def build(*, first_line=_MISSING, empty_lines=_default1, indent=_default2, last_line=_MISSING):
        node = _new(_cls)
        if first_line is _MISSING: first_line = _factory0()
        _set0(node, first_line)
        _set1(node, empty_lines)
        _set2(node, indent)
        if last_line is _MISSING: last_line = _factory3()
        _set3(node, last_line)
        return node
    return build


def _Pass(*, _new, _cls, _MISSING, _set0, _default0):
    def build(*, semicolon=_default0):
        node = _new(_cls)
        _set0(node, semicolon)
        return node
    return build


def _Plus(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_after is _MISSING: whitespace_after = _factory0()
        _set0(node, whitespace_after)
        return node
    return build


def _Power(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _PowerAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _Raise(*, _new, _cls, _MISSING, _set0, _default0, _set1, _default1, _set2, _default2, _set3, _default3):
    def build(*, exc=_default0, cause=_default1, whitespace_after_raise=_default2, semicolon=_default3):
        node = _new(_cls)
        _set0(node, exc)
        _set1(node, cause)
        _set2(node, whitespace_after_raise)
        _set3(node, semicolon)
        return node
    return build


def _Return(*, _new, _cls, _MISSING, _set0, _default0, _set1, _default1, _set2, _default2):
    def build(*, value=_default0, whitespace_after_return=_default1, semicolon=_default2):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, whitespace_after_return)
        _set2(node, semicolon)
        return node
    return build


def _RightCurlyBrace(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_before=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        return node
    return build


def _RightParen(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_before=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        return node
    return build


def _RightShift(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _RightShiftAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _RightSquareBracket(*, _new, _cls, _MISSING, _set0, _factory0):
    def build(*, whitespace_before=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        return node
    return build


def _Semicolon(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _Set(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _factory2, _set3, _default3, _set4, _default4):
    def build(*, elements, lbrace=_MISSING, rbrace=_MISSING, lpar=_default3, rpar=_default4):
        node = _new(_cls)
        _set0(node, elements)
        if lbrace is _MISSING: lbrace = _factory1()
        _set1(node, lbrace)
        if rbrace is _MISSING: rbrace = _factory2()
        _set2(node, rbrace)
        _set3(node, lpar)
        _set4(node, rpar)
        return node
    return build


def _SetComp(*, _new, _cls, _MISSING, _set0, _set1, _set2, _factory2, _set3, _factory3, _set4, _default4, _set5, _default5):
    def build(*, elt, for_in, lbrace=_MISSING, rbrace=_MISSING, lpar=_default4, rpar=_default5):
        node = _new(_cls)
        _set0(node, elt)
        _set1(node, for_in)
        if lbrace is _MISSING: lbrace = _factory2()
        _set2(node, lbrace)
        if rbrace is _MISSING: rbrace = _factory3()
        _set3(node, rbrace)
        _set4(node, lpar)
        _set5(node, rpar)
        return node
    return build


def _SimpleStatementLine(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _factory2):
    def build(*, body, leading_lines=_default1, trailing_whitespace=_MISSING):
        node = _new(_cls)
        _set0(node, body)
        _set1(node, leading_lines)
        if trailing_whitespace is _MISSING: trailing_whitespace = _factory2()
        _set2(node, trailing_whitespace)
        return node
    return build


def _SimpleStatementSuite(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _factory2):
    def build(*, body, leading_whitespace=_MISSING, trailing_whitespace=_MISSING):
        node = _new(_cls)
        _set0(node, body)
        if leading_whitespace is _MISSING: leading_whitespace = _factory1()
        _set1(node, leading_whitespace)
        if trailing_whitespace is _MISSING: trailing_whitespace = _factory2()
        _set2(node, trailing_whitespace)
        return node
    return build


def _SimpleString(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2):
    def build(*, value, lpar=_default1, rpar=_default2):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, lpar)
        _set2(node, rpar)
        return node
    return build


def _SimpleWhitespace(*, _new, _cls, _MISSING, _set0):
    def build(*, value):
        node = _new(_cls)
        _set0(node, value)
        return node
    return build


def _Slice(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _factory3, _set4, _default4):
    def build(*, lower, upper, step=_default2, first_colon=_MISSING, second_colon=_default4):
        node = _new(_cls)
        _set0(node, lower)
        _set1(node, upper)
        _set2(node, step)
        if first_colon is _MISSING: first_colon = _factory3()
        _set3(node, first_colon)
        _set4(node, second_colon)
        return node
    return build


def _StarredDictComp(*, _new, _cls, _MISSING, _set0, _set1, _set2, _factory2, _set3, _factory3, _set4, _default4, _set5, _default5, _set6, _factory6):
    def build(*, value, for_in, lbrace=_MISSING, rbrace=_MISSING, lpar=_default4, rpar=_default5, whitespace_before_value=_MISSING):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, for_in)
        if lbrace is _MISSING: lbrace = _factory2()
        _set2(node, lbrace)
        if rbrace is _MISSING: rbrace = _factory3()
        _set3(node, rbrace)
        _set4(node, lpar)
        _set5(node, rpar)
        if whitespace_before_value is _MISSING: whitespace_before_value = _factory6()
        _set6(node, whitespace_before_value)
        return node
    return build


def _StarredDictElement(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _factory2):
    def build(*, value, comma=_default1, whitespace_before_value=_MISSING):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, comma)
        if whitespace_before_value is _MISSING: whitespace_before_value = _factory2()
        _set2(node, whitespace_before_value)
        return node
    return build


def _StarredElement(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _factory4):
    def build(*, value, comma=_default1, lpar=_default2, rpar=_default3, whitespace_before_value=_MISSING):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, comma)
        _set2(node, lpar)
        _set3(node, rpar)
        if whitespace_before_value is _MISSING: whitespace_before_value = _factory4()
        _set4(node, whitespace_before_value)
        return node
    return build


def _Subscript(*, _new, _cls, _MISSING, _set0, _set1, _set2, _factory2, _set3, _factory3, _set4, _default4, _set5, _default5, _set6, _factory6):
    def build(*, value, slice, lbracket=_MISSING, rbracket=_MISSING, lpar=_default4, rpar=_default5, whitespace_after_value=_MISSING):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, slice)
        if lbracket is _MISSING: lbracket = _factory2()
        _set2(node, lbracket)
        if rbracket is _MISSING: rbracket = _factory3()
        _set3(node, rbracket)
        _set4(node, lpar)
        _set5(node, rpar)
        if whitespace_after_value is _MISSING: whitespace_after_value = _factory6()
        _set6(node, whitespace_after_value)
        return node
    return build


def _SubscriptElement(*, _new, _cls, _MISSING, _set0, _set1, _default1):
    def build(*, slice, comma=_default1):
        node = _new(_cls)
        _set0(node, slice)
        _set1(node, comma)
        return node
    return build


def _Subtract(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _SubtractAssign(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _factory1):
    def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):
        node = _new(_cls)
        if whitespace_before is _MISSING: whitespace_before = _factory0()
        _set0(node, whitespace_before)
        if whitespace_after is _MISSING: whitespace_after = _factory1()
        _set1(node, whitespace_after)
        return node
    return build


def _TemplatedString(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _default4):
    def build(*, parts, start=_default1, end=_default2, lpar=_default3, rpar=_default4):
        node = _new(_cls)
        _set0(node, parts)
        _set1(node, start)
        _set2(node, end)
        _set3(node, lpar)
        _set4(node, rpar)
        return node
    return build


def _TemplatedStringExpression(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _factory3, _set4, _factory4, _set5, _default5):
    def build(*, expression, conversion=_default1, format_spec=_default2, whitespace_before_expression=_MISSING, whitespace_after_expression=_MISSING, equal=_default5):
        node = _new(_cls)
        _set0(node, expression)
        _set1(node, conversion)
        _set2(node, format_spec)
        if whitespace_before_expression is _MISSING: whitespace_before_expression = _factory3()
        _set3(node, whitespace_before_expression)
        if whitespace_after_expression is _MISSING: whitespace_after_expression = _factory4()
        _set4(node, whitespace_after_expression)
        _set5(node, equal)
        return node
    return build


def _TemplatedStringText(*, _new, _cls, _MISSING, _set0):
    def build(*, value):
        node = _new(_cls)
        _set0(node, value)
        return node
    return build


def _TrailingWhitespace(*, _new, _cls, _MISSING, _set0, _factory0, _set1, _default1, _set2, _factory2):
    def build(*, whitespace=_MISSING, comment=_default1, newline=_MISSING):
        node = _new(_cls)
        if whitespace is _MISSING: whitespace = _factory0()
        _set0(node, whitespace)
        _set1(node, comment)
        if newline is _MISSING: newline = _factory2()
        _set2(node, newline)
        return node
    return build


def _Try(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _factory5):
    def build(*, body, handlers=_default1, orelse=_default2, finalbody=_default3, leading_lines=_default4, whitespace_before_colon=_MISSING):
        node = _new(_cls)
        _set0(node, body)
        _set1(node, handlers)
        _set2(node, orelse)
        _set3(node, finalbody)
        _set4(node, leading_lines)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory5()
        _set5(node, whitespace_before_colon)
        return node
    return build


def _TryStar(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _factory5):
    def build(*, body, handlers, orelse=_default2, finalbody=_default3, leading_lines=_default4, whitespace_before_colon=_MISSING):
        node = _new(_cls)
        _set0(node, body)
        _set1(node, handlers)
        _set2(node, orelse)
        _set3(node, finalbody)
        _set4(node, leading_lines)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory5()
        _set5(node, whitespace_before_colon)
        return node
    return build


def _Tuple(*, _new, _cls, _MISSING, _set0, _set1, _factory1, _set2, _factory2):
    def build(*, elements, lpar=_MISSING, rpar=_MISSING):
        node = _new(_cls)
        _set0(node, elements)
        if lpar is _MISSING: lpar = _factory1()
        _set1(node, lpar)
        if rpar is _MISSING: rpar = _factory2()
        _set2(node, rpar)
        return node
    return build


def _TypeAlias(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _factory3, _set4, _default4, _set5, _default5, _set6, _factory6, _set7, _default7):
    def build(*, name, value, type_parameters=_default2, whitespace_after_type=_MISSING, whitespace_after_name=_default4, whitespace_after_type_parameters=_default5, whitespace_after_equals=_MISSING, semicolon=_default7):
        node = _new(_cls)
        _set0(node, name)
        _set1(node, value)
        _set2(node, type_parameters)
        if whitespace_after_type is _MISSING: whitespace_after_type = _factory3()
        _set3(node, whitespace_after_type)
        _set4(node, whitespace_after_name)
        _set5(node, whitespace_after_type_parameters)
        if whitespace_after_equals is _MISSING: whitespace_after_equals = _factory6()
        _set6(node, whitespace_after_equals)
        _set7(node, semicolon)
        return node
    return build


def _TypeParam(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2, _set3, _default3, _set4, _factory4, _set5, _default5):
    def build(*, param, comma=_default1, equal=_default2, star=_default3, whitespace_after_star=_MISSING, default=_default5):
        node = _new(_cls)
        _set0(node, param)
        _set1(node, comma)
        _set2(node, equal)
        _set3(node, star)
        if whitespace_after_star is _MISSING: whitespace_after_star = _factory4()
        _set4(node, whitespace_after_star)
        _set5(node, default)
        return node
    return build


def _TypeParameters(*, _new, _cls, _MISSING, _set0, _default0, _set1, _factory1, _set2, _factory2):
    def build(*, params=_default0, lbracket=_MISSING, rbracket=_MISSING):
        node = _new(_cls)
        _set0(node, params)
        if lbracket is _MISSING: lbracket = _factory1()
        _set1(node, lbracket)
        if rbracket is _MISSING: rbracket = _factory2()
        _set2(node, rbracket)
        return node
    return build


def _TypeVar(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2):
    def build(*, name, bound=_default1, colon=_default2):
        node = _new(_cls)
        _set0(node, name)
        _set1(node, bound)
        _set2(node, colon)
        return node
    return build


def _TypeVarTuple(*, _new, _cls, _MISSING, _set0, _set1, _factory1):
    def build(*, name, whitespace_after_star=_MISSING):
        node = _new(_cls)
        _set0(node, name)
        if whitespace_after_star is _MISSING: whitespace_after_star = _factory1()
        _set1(node, whitespace_after_star)
        return node
    return build


def _UnaryOperation(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3):
    def build(*, operator, expression, lpar=_default2, rpar=_default3):
        node = _new(_cls)
        _set0(node, operator)
        _set1(node, expression)
        _set2(node, lpar)
        _set3(node, rpar)
        return node
    return build


def _While(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _factory4, _set5, _factory5):
    def build(*, test, body, orelse=_default2, leading_lines=_default3, whitespace_after_while=_MISSING, whitespace_before_colon=_MISSING):
        node = _new(_cls)
        _set0(node, test)
        _set1(node, body)
        _set2(node, orelse)
        _set3(node, leading_lines)
        if whitespace_after_while is _MISSING: whitespace_after_while = _factory4()
        _set4(node, whitespace_after_while)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory5()
        _set5(node, whitespace_before_colon)
        return node
    return build


def _With(*, _new, _cls, _MISSING, _set0, _set1, _set2, _default2, _set3, _default3, _set4, _default4, _set5, _default5, _set6, _factory6, _set7, _factory7):
    def build(*, items, body, asynchronous=_default2, leading_lines=_default3, lpar=_default4, rpar=_default5, whitespace_after_with=_MISSING, whitespace_before_colon=_MISSING):
        node = _new(_cls)
        _set0(node, items)
        _set1(node, body)
        _set2(node, asynchronous)
        _set3(node, leading_lines)
        _set4(node, lpar)
        _set5(node, rpar)
        if whitespace_after_with is _MISSING: whitespace_after_with = _factory6()
        _set6(node, whitespace_after_with)
        if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory7()
        _set7(node, whitespace_before_colon)
        return node
    return build


def _WithItem(*, _new, _cls, _MISSING, _set0, _set1, _default1, _set2, _default2):
    def build(*, item, asname=_default1, comma=_default2):
        node = _new(_cls)
        _set0(node, item)
        _set1(node, asname)
        _set2(node, comma)
        return node
    return build


def _Yield(*, _new, _cls, _MISSING, _set0, _default0, _set1, _default1, _set2, _default2, _set3, _default3):
    def build(*, value=_default0, lpar=_default1, rpar=_default2, whitespace_after_yield=_default3):
        node = _new(_cls)
        _set0(node, value)
        _set1(node, lpar)
        _set2(node, rpar)
        _set3(node, whitespace_after_yield)
        return node
    return build


# class name -> (the code of its builder, the function that returns it)
BUILDERS = {
    'Add': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Add),
    'AddAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _AddAssign),
    'And': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _And),
    'AnnAssign': ('def build(*, target, annotation, value=_default2, equal=_default3, semicolon=_default4):\n    node = _new(_cls)\n    _set0(node, target)\n    _set1(node, annotation)\n    _set2(node, value)\n    _set3(node, equal)\n    _set4(node, semicolon)\n    return node\n', _AnnAssign),
    'Annotation': ('def build(*, annotation, whitespace_before_indicator=_default1, whitespace_after_indicator=_MISSING):\n    node = _new(_cls)\n    _set0(node, annotation)\n    _set1(node, whitespace_before_indicator)\n    if whitespace_after_indicator is _MISSING: whitespace_after_indicator = _factory2()\n    _set2(node, whitespace_after_indicator)\n    return node\n', _Annotation),
    'Arg': ('def build(*, value, keyword=_default1, equal=_default2, comma=_default3, star=_default4, whitespace_after_star=_MISSING, whitespace_after_arg=_MISSING):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, keyword)\n    _set2(node, equal)\n    _set3(node, comma)\n    _set4(node, star)\n    if whitespace_after_star is _MISSING: whitespace_after_star = _factory5()\n    _set5(node, whitespace_after_star)\n    if whitespace_after_arg is _MISSING: whitespace_after_arg = _factory6()\n    _set6(node, whitespace_after_arg)\n    return node\n', _Arg),
    'AsName': ('def build(*, name, whitespace_before_as=_MISSING, whitespace_after_as=_MISSING):\n    node = _new(_cls)\n    _set0(node, name)\n    if whitespace_before_as is _MISSING: whitespace_before_as = _factory1()\n    _set1(node, whitespace_before_as)\n    if whitespace_after_as is _MISSING: whitespace_after_as = _factory2()\n    _set2(node, whitespace_after_as)\n    return node\n', _AsName),
    'Assert': ('def build(*, test, msg=_default1, comma=_default2, whitespace_after_assert=_MISSING, semicolon=_default4):\n    node = _new(_cls)\n    _set0(node, test)\n    _set1(node, msg)\n    _set2(node, comma)\n    if whitespace_after_assert is _MISSING: whitespace_after_assert = _factory3()\n    _set3(node, whitespace_after_assert)\n    _set4(node, semicolon)\n    return node\n', _Assert),
    'Assign': ('def build(*, targets, value, semicolon=_default2):\n    node = _new(_cls)\n    _set0(node, targets)\n    _set1(node, value)\n    _set2(node, semicolon)\n    return node\n', _Assign),
    'AssignEqual': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _AssignEqual),
    'AssignTarget': ('def build(*, target, whitespace_before_equal=_MISSING, whitespace_after_equal=_MISSING):\n    node = _new(_cls)\n    _set0(node, target)\n    if whitespace_before_equal is _MISSING: whitespace_before_equal = _factory1()\n    _set1(node, whitespace_before_equal)\n    if whitespace_after_equal is _MISSING: whitespace_after_equal = _factory2()\n    _set2(node, whitespace_after_equal)\n    return node\n', _AssignTarget),
    'Asynchronous': ('def build(*, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_after is _MISSING: whitespace_after = _factory0()\n    _set0(node, whitespace_after)\n    return node\n', _Asynchronous),
    'Attribute': ('def build(*, value, attr, dot=_default2, lpar=_default3, rpar=_default4):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, attr)\n    _set2(node, dot)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    return node\n', _Attribute),
    'AugAssign': ('def build(*, target, operator, value, semicolon=_default3):\n    node = _new(_cls)\n    _set0(node, target)\n    _set1(node, operator)\n    _set2(node, value)\n    _set3(node, semicolon)\n    return node\n', _AugAssign),
    'Await': ('def build(*, expression, lpar=_default1, rpar=_default2, whitespace_after_await=_MISSING):\n    node = _new(_cls)\n    _set0(node, expression)\n    _set1(node, lpar)\n    _set2(node, rpar)\n    if whitespace_after_await is _MISSING: whitespace_after_await = _factory3()\n    _set3(node, whitespace_after_await)\n    return node\n', _Await),
    'BinaryOperation': ('def build(*, left, operator, right, lpar=_default3, rpar=_default4):\n    node = _new(_cls)\n    _set0(node, left)\n    _set1(node, operator)\n    _set2(node, right)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    return node\n', _BinaryOperation),
    'BitAnd': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _BitAnd),
    'BitAndAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _BitAndAssign),
    'BitInvert': ('def build(*, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_after is _MISSING: whitespace_after = _factory0()\n    _set0(node, whitespace_after)\n    return node\n', _BitInvert),
    'BitOr': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _BitOr),
    'BitOrAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _BitOrAssign),
    'BitXor': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _BitXor),
    'BitXorAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _BitXorAssign),
    'BooleanOperation': ('def build(*, left, operator, right, lpar=_default3, rpar=_default4):\n    node = _new(_cls)\n    _set0(node, left)\n    _set1(node, operator)\n    _set2(node, right)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    return node\n', _BooleanOperation),
    'Break': ('def build(*, semicolon=_default0):\n    node = _new(_cls)\n    _set0(node, semicolon)\n    return node\n', _Break),
    'Call': ('def build(*, func, args=_default1, lpar=_default2, rpar=_default3, whitespace_after_func=_MISSING, whitespace_before_args=_MISSING):\n    node = _new(_cls)\n    _set0(node, func)\n    _set1(node, args)\n    _set2(node, lpar)\n    _set3(node, rpar)\n    if whitespace_after_func is _MISSING: whitespace_after_func = _factory4()\n    _set4(node, whitespace_after_func)\n    if whitespace_before_args is _MISSING: whitespace_before_args = _factory5()\n    _set5(node, whitespace_before_args)\n    return node\n', _Call),
    'ClassDef': ('def build(*, name, body, bases=_default2, keywords=_default3, decorators=_default4, lpar=_default5, rpar=_default6, leading_lines=_default7, lines_after_decorators=_default8, whitespace_after_class=_MISSING, whitespace_after_name=_MISSING, whitespace_before_colon=_MISSING, type_parameters=_default12, whitespace_after_type_parameters=_MISSING):\n    node = _new(_cls)\n    _set0(node, name)\n    _set1(node, body)\n    _set2(node, bases)\n    _set3(node, keywords)\n    _set4(node, decorators)\n    _set5(node, lpar)\n    _set6(node, rpar)\n    _set7(node, leading_lines)\n    _set8(node, lines_after_decorators)\n    if whitespace_after_class is _MISSING: whitespace_after_class = _factory9()\n    _set9(node, whitespace_after_class)\n    if whitespace_after_name is _MISSING: whitespace_after_name = _factory10()\n    _set10(node, whitespace_after_name)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory11()\n    _set11(node, whitespace_before_colon)\n    _set12(node, type_parameters)\n    if whitespace_after_type_parameters is _MISSING: whitespace_after_type_parameters = _factory13()\n    _set13(node, whitespace_after_type_parameters)\n    return node\n', _ClassDef),
    'Colon': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Colon),
    'Comma': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Comma),
    'Comment': ('def build(*, value):\n    node = _new(_cls)\n    _set0(node, value)\n    return node\n', _Comment),
    'CompFor': ('def build(*, target, iter, ifs=_default2, inner_for_in=_default3, asynchronous=_default4, whitespace_before=_MISSING, whitespace_after_for=_MISSING, whitespace_before_in=_MISSING, whitespace_after_in=_MISSING):\n    node = _new(_cls)\n    _set0(node, target)\n    _set1(node, iter)\n    _set2(node, ifs)\n    _set3(node, inner_for_in)\n    _set4(node, asynchronous)\n    if whitespace_before is _MISSING: whitespace_before = _factory5()\n    _set5(node, whitespace_before)\n    if whitespace_after_for is _MISSING: whitespace_after_for = _factory6()\n    _set6(node, whitespace_after_for)\n    if whitespace_before_in is _MISSING: whitespace_before_in = _factory7()\n    _set7(node, whitespace_before_in)\n    if whitespace_after_in is _MISSING: whitespace_after_in = _factory8()\n    _set8(node, whitespace_after_in)\n    return node\n', _CompFor),
    'CompIf': ('def build(*, test, whitespace_before=_MISSING, whitespace_before_test=_MISSING):\n    node = _new(_cls)\n    _set0(node, test)\n    if whitespace_before is _MISSING: whitespace_before = _factory1()\n    _set1(node, whitespace_before)\n    if whitespace_before_test is _MISSING: whitespace_before_test = _factory2()\n    _set2(node, whitespace_before_test)\n    return node\n', _CompIf),
    'Comparison': ('def build(*, left, comparisons, lpar=_default2, rpar=_default3):\n    node = _new(_cls)\n    _set0(node, left)\n    _set1(node, comparisons)\n    _set2(node, lpar)\n    _set3(node, rpar)\n    return node\n', _Comparison),
    'ComparisonTarget': ('def build(*, operator, comparator):\n    node = _new(_cls)\n    _set0(node, operator)\n    _set1(node, comparator)\n    return node\n', _ComparisonTarget),
    'ConcatenatedString': ('def build(*, left, right, lpar=_default2, rpar=_default3, whitespace_between=_MISSING):\n    node = _new(_cls)\n    _set0(node, left)\n    _set1(node, right)\n    _set2(node, lpar)\n    _set3(node, rpar)\n    if whitespace_between is _MISSING: whitespace_between = _factory4()\n    _set4(node, whitespace_between)\n    return node\n', _ConcatenatedString),
    'Continue': ('def build(*, semicolon=_default0):\n    node = _new(_cls)\n    _set0(node, semicolon)\n    return node\n', _Continue),
    'Decorator': ('def build(*, decorator, leading_lines=_default1, whitespace_after_at=_MISSING, trailing_whitespace=_MISSING):\n    node = _new(_cls)\n    _set0(node, decorator)\n    _set1(node, leading_lines)\n    if whitespace_after_at is _MISSING: whitespace_after_at = _factory2()\n    _set2(node, whitespace_after_at)\n    if trailing_whitespace is _MISSING: trailing_whitespace = _factory3()\n    _set3(node, trailing_whitespace)\n    return node\n', _Decorator),
    'Del': ('def build(*, target, whitespace_after_del=_MISSING, semicolon=_default2):\n    node = _new(_cls)\n    _set0(node, target)\n    if whitespace_after_del is _MISSING: whitespace_after_del = _factory1()\n    _set1(node, whitespace_after_del)\n    _set2(node, semicolon)\n    return node\n', _Del),
    'Dict': ('def build(*, elements, lbrace=_MISSING, rbrace=_MISSING, lpar=_default3, rpar=_default4):\n    node = _new(_cls)\n    _set0(node, elements)\n    if lbrace is _MISSING: lbrace = _factory1()\n    _set1(node, lbrace)\n    if rbrace is _MISSING: rbrace = _factory2()\n    _set2(node, rbrace)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    return node\n', _Dict),
    'DictComp': ('def build(*, key, value, for_in, lbrace=_MISSING, rbrace=_MISSING, lpar=_default5, rpar=_default6, whitespace_before_colon=_MISSING, whitespace_after_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, key)\n    _set1(node, value)\n    _set2(node, for_in)\n    if lbrace is _MISSING: lbrace = _factory3()\n    _set3(node, lbrace)\n    if rbrace is _MISSING: rbrace = _factory4()\n    _set4(node, rbrace)\n    _set5(node, lpar)\n    _set6(node, rpar)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory7()\n    _set7(node, whitespace_before_colon)\n    if whitespace_after_colon is _MISSING: whitespace_after_colon = _factory8()\n    _set8(node, whitespace_after_colon)\n    return node\n', _DictComp),
    'DictElement': ('def build(*, key, value, comma=_default2, whitespace_before_colon=_MISSING, whitespace_after_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, key)\n    _set1(node, value)\n    _set2(node, comma)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory3()\n    _set3(node, whitespace_before_colon)\n    if whitespace_after_colon is _MISSING: whitespace_after_colon = _factory4()\n    _set4(node, whitespace_after_colon)\n    return node\n', _DictElement),
    'Divide': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Divide),
    'DivideAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _DivideAssign),
    'Dot': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Dot),
    'Element': ('def build(*, value, comma=_default1):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, comma)\n    return node\n', _Element),
    'Ellipsis': ('def build(*, lpar=_default0, rpar=_default1):\n    node = _new(_cls)\n    _set0(node, lpar)\n    _set1(node, rpar)\n    return node\n', _Ellipsis),
    'Else': ('def build(*, body, leading_lines=_default1, whitespace_before_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, body)\n    _set1(node, leading_lines)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory2()\n    _set2(node, whitespace_before_colon)\n    return node\n', _Else),
    'EmptyLine': ('def build(*, indent=_default0, whitespace=_MISSING, comment=_default2, newline=_MISSING):\n    node = _new(_cls)\n    _set0(node, indent)\n    if whitespace is _MISSING: whitespace = _factory1()\n    _set1(node, whitespace)\n    _set2(node, comment)\n    if newline is _MISSING: newline = _factory3()\n    _set3(node, newline)\n    return node\n', _EmptyLine),
    'Equal': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Equal),
    'ExceptHandler': ('def build(*, body, type=_default1, name=_default2, leading_lines=_default3, whitespace_after_except=_MISSING, whitespace_before_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, body)\n    _set1(node, type)\n    _set2(node, name)\n    _set3(node, leading_lines)\n    if whitespace_after_except is _MISSING: whitespace_after_except = _factory4()\n    _set4(node, whitespace_after_except)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory5()\n    _set5(node, whitespace_before_colon)\n    return node\n', _ExceptHandler),
    'ExceptStarHandler': ('def build(*, body, type, name=_default2, leading_lines=_default3, whitespace_after_except=_MISSING, whitespace_after_star=_MISSING, whitespace_before_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, body)\n    _set1(node, type)\n    _set2(node, name)\n    _set3(node, leading_lines)\n    if whitespace_after_except is _MISSING: whitespace_after_except = _factory4()\n    _set4(node, whitespace_after_except)\n    if whitespace_after_star is _MISSING: whitespace_after_star = _factory5()\n    _set5(node, whitespace_after_star)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory6()\n    _set6(node, whitespace_before_colon)\n    return node\n', _ExceptStarHandler),
    'Expr': ('def build(*, value, semicolon=_default1):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, semicolon)\n    return node\n', _Expr),
    'Finally': ('def build(*, body, leading_lines=_default1, whitespace_before_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, body)\n    _set1(node, leading_lines)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory2()\n    _set2(node, whitespace_before_colon)\n    return node\n', _Finally),
    'Float': ('def build(*, value, lpar=_default1, rpar=_default2):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, lpar)\n    _set2(node, rpar)\n    return node\n', _Float),
    'FloorDivide': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _FloorDivide),
    'FloorDivideAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _FloorDivideAssign),
    'For': ('def build(*, target, iter, body, orelse=_default3, asynchronous=_default4, leading_lines=_default5, whitespace_after_for=_MISSING, whitespace_before_in=_MISSING, whitespace_after_in=_MISSING, whitespace_before_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, target)\n    _set1(node, iter)\n    _set2(node, body)\n    _set3(node, orelse)\n    _set4(node, asynchronous)\n    _set5(node, leading_lines)\n    if whitespace_after_for is _MISSING: whitespace_after_for = _factory6()\n    _set6(node, whitespace_after_for)\n    if whitespace_before_in is _MISSING: whitespace_before_in = _factory7()\n    _set7(node, whitespace_before_in)\n    if whitespace_after_in is _MISSING: whitespace_after_in = _factory8()\n    _set8(node, whitespace_after_in)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory9()\n    _set9(node, whitespace_before_colon)\n    return node\n', _For),
    'FormattedString': ('def build(*, parts, start=_default1, end=_default2, lpar=_default3, rpar=_default4):\n    node = _new(_cls)\n    _set0(node, parts)\n    _set1(node, start)\n    _set2(node, end)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    return node\n', _FormattedString),
    'FormattedStringExpression': ('def build(*, expression, conversion=_default1, format_spec=_default2, whitespace_before_expression=_MISSING, whitespace_after_expression=_MISSING, equal=_default5):\n    node = _new(_cls)\n    _set0(node, expression)\n    _set1(node, conversion)\n    _set2(node, format_spec)\n    if whitespace_before_expression is _MISSING: whitespace_before_expression = _factory3()\n    _set3(node, whitespace_before_expression)\n    if whitespace_after_expression is _MISSING: whitespace_after_expression = _factory4()\n    _set4(node, whitespace_after_expression)\n    _set5(node, equal)\n    return node\n', _FormattedStringExpression),
    'FormattedStringText': ('def build(*, value):\n    node = _new(_cls)\n    _set0(node, value)\n    return node\n', _FormattedStringText),
    'From': ('def build(*, item, whitespace_before_from=_default1, whitespace_after_from=_MISSING):\n    node = _new(_cls)\n    _set0(node, item)\n    _set1(node, whitespace_before_from)\n    if whitespace_after_from is _MISSING: whitespace_after_from = _factory2()\n    _set2(node, whitespace_after_from)\n    return node\n', _From),
    'FunctionDef': ('def build(*, name, params, body, decorators=_default3, returns=_default4, asynchronous=_default5, leading_lines=_default6, lines_after_decorators=_default7, whitespace_after_def=_MISSING, whitespace_after_name=_MISSING, whitespace_before_params=_MISSING, whitespace_before_colon=_MISSING, type_parameters=_default12, whitespace_after_type_parameters=_MISSING):\n    node = _new(_cls)\n    _set0(node, name)\n    _set1(node, params)\n    _set2(node, body)\n    _set3(node, decorators)\n    _set4(node, returns)\n    _set5(node, asynchronous)\n    _set6(node, leading_lines)\n    _set7(node, lines_after_decorators)\n    if whitespace_after_def is _MISSING: whitespace_after_def = _factory8()\n    _set8(node, whitespace_after_def)\n    if whitespace_after_name is _MISSING: whitespace_after_name = _factory9()\n    _set9(node, whitespace_after_name)\n    if whitespace_before_params is _MISSING: whitespace_before_params = _factory10()\n    _set10(node, whitespace_before_params)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory11()\n    _set11(node, whitespace_before_colon)\n    _set12(node, type_parameters)\n    if whitespace_after_type_parameters is _MISSING: whitespace_after_type_parameters = _factory13()\n    _set13(node, whitespace_after_type_parameters)\n    return node\n', _FunctionDef),
    'GeneratorExp': ('def build(*, elt, for_in, lpar=_MISSING, rpar=_MISSING):\n    node = _new(_cls)\n    _set0(node, elt)\n    _set1(node, for_in)\n    if lpar is _MISSING: lpar = _factory2()\n    _set2(node, lpar)\n    if rpar is _MISSING: rpar = _factory3()\n    _set3(node, rpar)\n    return node\n', _GeneratorExp),
    'Global': ('def build(*, names, whitespace_after_global=_MISSING, semicolon=_default2):\n    node = _new(_cls)\n    _set0(node, names)\n    if whitespace_after_global is _MISSING: whitespace_after_global = _factory1()\n    _set1(node, whitespace_after_global)\n    _set2(node, semicolon)\n    return node\n', _Global),
    'GreaterThan': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _GreaterThan),
    'GreaterThanEqual': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _GreaterThanEqual),
    'If': ('def build(*, test, body, orelse=_default2, leading_lines=_default3, whitespace_before_test=_MISSING, whitespace_after_test=_MISSING):\n    node = _new(_cls)\n    _set0(node, test)\n    _set1(node, body)\n    _set2(node, orelse)\n    _set3(node, leading_lines)\n    if whitespace_before_test is _MISSING: whitespace_before_test = _factory4()\n    _set4(node, whitespace_before_test)\n    if whitespace_after_test is _MISSING: whitespace_after_test = _factory5()\n    _set5(node, whitespace_after_test)\n    return node\n', _If),
    'IfExp': ('def build(*, test, body, orelse, lpar=_default3, rpar=_default4, whitespace_before_if=_MISSING, whitespace_after_if=_MISSING, whitespace_before_else=_MISSING, whitespace_after_else=_MISSING):\n    node = _new(_cls)\n    _set0(node, test)\n    _set1(node, body)\n    _set2(node, orelse)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    if whitespace_before_if is _MISSING: whitespace_before_if = _factory5()\n    _set5(node, whitespace_before_if)\n    if whitespace_after_if is _MISSING: whitespace_after_if = _factory6()\n    _set6(node, whitespace_after_if)\n    if whitespace_before_else is _MISSING: whitespace_before_else = _factory7()\n    _set7(node, whitespace_before_else)\n    if whitespace_after_else is _MISSING: whitespace_after_else = _factory8()\n    _set8(node, whitespace_after_else)\n    return node\n', _IfExp),
    'Imaginary': ('def build(*, value, lpar=_default1, rpar=_default2):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, lpar)\n    _set2(node, rpar)\n    return node\n', _Imaginary),
    'Import': ('def build(*, names, semicolon=_default1, whitespace_after_import=_MISSING):\n    node = _new(_cls)\n    _set0(node, names)\n    _set1(node, semicolon)\n    if whitespace_after_import is _MISSING: whitespace_after_import = _factory2()\n    _set2(node, whitespace_after_import)\n    return node\n', _Import),
    'ImportAlias': ('def build(*, name, asname=_default1, comma=_default2):\n    node = _new(_cls)\n    _set0(node, name)\n    _set1(node, asname)\n    _set2(node, comma)\n    return node\n', _ImportAlias),
    'ImportFrom': ('def build(*, module, names, relative=_default2, lpar=_default3, rpar=_default4, semicolon=_default5, whitespace_after_from=_MISSING, whitespace_before_import=_MISSING, whitespace_after_import=_MISSING):\n    node = _new(_cls)\n    _set0(node, module)\n    _set1(node, names)\n    _set2(node, relative)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    _set5(node, semicolon)\n    if whitespace_after_from is _MISSING: whitespace_after_from = _factory6()\n    _set6(node, whitespace_after_from)\n    if whitespace_before_import is _MISSING: whitespace_before_import = _factory7()\n    _set7(node, whitespace_before_import)\n    if whitespace_after_import is _MISSING: whitespace_after_import = _factory8()\n    _set8(node, whitespace_after_import)\n    return node\n', _ImportFrom),
    'ImportStar': ('def build():\n    node = _new(_cls)\n    return node\n', _ImportStar),
    'In': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _In),
    'IndentedBlock': ('def build(*, body, header=_MISSING, indent=_default2, footer=_default3):\n    node = _new(_cls)\n    _set0(node, body)\n    if header is _MISSING: header = _factory1()\n    _set1(node, header)\n    _set2(node, indent)\n    _set3(node, footer)\n    return node\n', _IndentedBlock),
    'Index': ('def build(*, value, star=_default1, whitespace_after_star=_default2):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, star)\n    _set2(node, whitespace_after_star)\n    return node\n', _Index),
    'Integer': ('def build(*, value, lpar=_default1, rpar=_default2):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, lpar)\n    _set2(node, rpar)\n    return node\n', _Integer),
    'Is': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Is),
    'IsNot': ('def build(*, whitespace_before=_MISSING, whitespace_between=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_between is _MISSING: whitespace_between = _factory1()\n    _set1(node, whitespace_between)\n    if whitespace_after is _MISSING: whitespace_after = _factory2()\n    _set2(node, whitespace_after)\n    return node\n', _IsNot),
    'Lambda': ('def build(*, params, body, colon=_MISSING, lpar=_default3, rpar=_default4, whitespace_after_lambda=_default5):\n    node = _new(_cls)\n    _set0(node, params)\n    _set1(node, body)\n    if colon is _MISSING: colon = _factory2()\n    _set2(node, colon)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    _set5(node, whitespace_after_lambda)\n    return node\n', _Lambda),
    'LazyImport': ('def build(*, names, semicolon=_default1, whitespace_after_lazy=_MISSING, whitespace_after_import=_MISSING):\n    node = _new(_cls)\n    _set0(node, names)\n    _set1(node, semicolon)\n    if whitespace_after_lazy is _MISSING: whitespace_after_lazy = _factory2()\n    _set2(node, whitespace_after_lazy)\n    if whitespace_after_import is _MISSING: whitespace_after_import = _factory3()\n    _set3(node, whitespace_after_import)\n    return node\n', _LazyImport),
    'LazyImportFrom': ('def build(*, module, names, relative=_default2, lpar=_default3, rpar=_default4, semicolon=_default5, whitespace_after_lazy=_MISSING, whitespace_after_from=_MISSING, whitespace_before_import=_MISSING, whitespace_after_import=_MISSING):\n    node = _new(_cls)\n    _set0(node, module)\n    _set1(node, names)\n    _set2(node, relative)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    _set5(node, semicolon)\n    if whitespace_after_lazy is _MISSING: whitespace_after_lazy = _factory6()\n    _set6(node, whitespace_after_lazy)\n    if whitespace_after_from is _MISSING: whitespace_after_from = _factory7()\n    _set7(node, whitespace_after_from)\n    if whitespace_before_import is _MISSING: whitespace_before_import = _factory8()\n    _set8(node, whitespace_before_import)\n    if whitespace_after_import is _MISSING: whitespace_after_import = _factory9()\n    _set9(node, whitespace_after_import)\n    return node\n', _LazyImportFrom),
    'LeftCurlyBrace': ('def build(*, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_after is _MISSING: whitespace_after = _factory0()\n    _set0(node, whitespace_after)\n    return node\n', _LeftCurlyBrace),
    'LeftParen': ('def build(*, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_after is _MISSING: whitespace_after = _factory0()\n    _set0(node, whitespace_after)\n    return node\n', _LeftParen),
    'LeftShift': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _LeftShift),
    'LeftShiftAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _LeftShiftAssign),
    'LeftSquareBracket': ('def build(*, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_after is _MISSING: whitespace_after = _factory0()\n    _set0(node, whitespace_after)\n    return node\n', _LeftSquareBracket),
    'LessThan': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _LessThan),
    'LessThanEqual': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _LessThanEqual),
    'List': ('def build(*, elements, lbracket=_MISSING, rbracket=_MISSING, lpar=_default3, rpar=_default4):\n    node = _new(_cls)\n    _set0(node, elements)\n    if lbracket is _MISSING: lbracket = _factory1()\n    _set1(node, lbracket)\n    if rbracket is _MISSING: rbracket = _factory2()\n    _set2(node, rbracket)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    return node\n', _List),
    'ListComp': ('def build(*, elt, for_in, lbracket=_MISSING, rbracket=_MISSING, lpar=_default4, rpar=_default5):\n    node = _new(_cls)\n    _set0(node, elt)\n    _set1(node, for_in)\n    if lbracket is _MISSING: lbracket = _factory2()\n    _set2(node, lbracket)\n    if rbracket is _MISSING: rbracket = _factory3()\n    _set3(node, rbracket)\n    _set4(node, lpar)\n    _set5(node, rpar)\n    return node\n', _ListComp),
    'Match': ('def build(*, subject, cases, leading_lines=_default2, whitespace_after_match=_MISSING, whitespace_before_colon=_MISSING, whitespace_after_colon=_MISSING, indent=_default6, footer=_default7):\n    node = _new(_cls)\n    _set0(node, subject)\n    _set1(node, cases)\n    _set2(node, leading_lines)\n    if whitespace_after_match is _MISSING: whitespace_after_match = _factory3()\n    _set3(node, whitespace_after_match)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory4()\n    _set4(node, whitespace_before_colon)\n    if whitespace_after_colon is _MISSING: whitespace_after_colon = _factory5()\n    _set5(node, whitespace_after_colon)\n    _set6(node, indent)\n    _set7(node, footer)\n    return node\n', _Match),
    'MatchAs': ('def build(*, pattern=_default0, name=_default1, whitespace_before_as=_default2, whitespace_after_as=_default3, lpar=_default4, rpar=_default5):\n    node = _new(_cls)\n    _set0(node, pattern)\n    _set1(node, name)\n    _set2(node, whitespace_before_as)\n    _set3(node, whitespace_after_as)\n    _set4(node, lpar)\n    _set5(node, rpar)\n    return node\n', _MatchAs),
    'MatchCase': ('def build(*, pattern, body, guard=_default2, leading_lines=_default3, whitespace_after_case=_MISSING, whitespace_before_if=_MISSING, whitespace_after_if=_MISSING, whitespace_before_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, pattern)\n    _set1(node, body)\n    _set2(node, guard)\n    _set3(node, leading_lines)\n    if whitespace_after_case is _MISSING: whitespace_after_case = _factory4()\n    _set4(node, whitespace_after_case)\n    if whitespace_before_if is _MISSING: whitespace_before_if = _factory5()\n    _set5(node, whitespace_before_if)\n    if whitespace_after_if is _MISSING: whitespace_after_if = _factory6()\n    _set6(node, whitespace_after_if)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory7()\n    _set7(node, whitespace_before_colon)\n    return node\n', _MatchCase),
    'MatchClass': ('def build(*, cls, patterns=_default1, kwds=_default2, whitespace_after_cls=_MISSING, whitespace_before_patterns=_MISSING, whitespace_after_kwds=_MISSING, lpar=_default6, rpar=_default7):\n    node = _new(_cls)\n    _set0(node, cls)\n    _set1(node, patterns)\n    _set2(node, kwds)\n    if whitespace_after_cls is _MISSING: whitespace_after_cls = _factory3()\n    _set3(node, whitespace_after_cls)\n    if whitespace_before_patterns is _MISSING: whitespace_before_patterns = _factory4()\n    _set4(node, whitespace_before_patterns)\n    if whitespace_after_kwds is _MISSING: whitespace_after_kwds = _factory5()\n    _set5(node, whitespace_after_kwds)\n    _set6(node, lpar)\n    _set7(node, rpar)\n    return node\n', _MatchClass),
    'MatchKeywordElement': ('def build(*, key, pattern, comma=_default2, whitespace_before_equal=_MISSING, whitespace_after_equal=_MISSING):\n    node = _new(_cls)\n    _set0(node, key)\n    _set1(node, pattern)\n    _set2(node, comma)\n    if whitespace_before_equal is _MISSING: whitespace_before_equal = _factory3()\n    _set3(node, whitespace_before_equal)\n    if whitespace_after_equal is _MISSING: whitespace_after_equal = _factory4()\n    _set4(node, whitespace_after_equal)\n    return node\n', _MatchKeywordElement),
    'MatchList': ('def build(*, patterns, lbracket=_default1, rbracket=_default2, lpar=_default3, rpar=_default4):\n    node = _new(_cls)\n    _set0(node, patterns)\n    _set1(node, lbracket)\n    _set2(node, rbracket)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    return node\n', _MatchList),
    'MatchMapping': ('def build(*, elements=_default0, lbrace=_MISSING, rbrace=_MISSING, rest=_default3, whitespace_before_rest=_MISSING, trailing_comma=_default5, lpar=_default6, rpar=_default7):\n    node = _new(_cls)\n    _set0(node, elements)\n    if lbrace is _MISSING: lbrace = _factory1()\n    _set1(node, lbrace)\n    if rbrace is _MISSING: rbrace = _factory2()\n    _set2(node, rbrace)\n    _set3(node, rest)\n    if whitespace_before_rest is _MISSING: whitespace_before_rest = _factory4()\n    _set4(node, whitespace_before_rest)\n    _set5(node, trailing_comma)\n    _set6(node, lpar)\n    _set7(node, rpar)\n    return node\n', _MatchMapping),
    'MatchMappingElement': ('def build(*, key, pattern, comma=_default2, whitespace_before_colon=_MISSING, whitespace_after_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, key)\n    _set1(node, pattern)\n    _set2(node, comma)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory3()\n    _set3(node, whitespace_before_colon)\n    if whitespace_after_colon is _MISSING: whitespace_after_colon = _factory4()\n    _set4(node, whitespace_after_colon)\n    return node\n', _MatchMappingElement),
    'MatchOr': ('def build(*, patterns, lpar=_default1, rpar=_default2):\n    node = _new(_cls)\n    _set0(node, patterns)\n    _set1(node, lpar)\n    _set2(node, rpar)\n    return node\n', _MatchOr),
    'MatchOrElement': ('def build(*, pattern, separator=_default1):\n    node = _new(_cls)\n    _set0(node, pattern)\n    _set1(node, separator)\n    return node\n', _MatchOrElement),
    'MatchSequenceElement': ('def build(*, value, comma=_default1):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, comma)\n    return node\n', _MatchSequenceElement),
    'MatchSingleton': ('def build(*, value):\n    node = _new(_cls)\n    _set0(node, value)\n    return node\n', _MatchSingleton),
    'MatchStar': ('def build(*, name=_default0, comma=_default1, whitespace_before_name=_MISSING):\n    node = _new(_cls)\n    _set0(node, name)\n    _set1(node, comma)\n    if whitespace_before_name is _MISSING: whitespace_before_name = _factory2()\n    _set2(node, whitespace_before_name)\n    return node\n', _MatchStar),
    'MatchTuple': ('def build(*, patterns, lpar=_MISSING, rpar=_MISSING):\n    node = _new(_cls)\n    _set0(node, patterns)\n    if lpar is _MISSING: lpar = _factory1()\n    _set1(node, lpar)\n    if rpar is _MISSING: rpar = _factory2()\n    _set2(node, rpar)\n    return node\n', _MatchTuple),
    'MatchValue': ('def build(*, value):\n    node = _new(_cls)\n    _set0(node, value)\n    return node\n', _MatchValue),
    'MatrixMultiply': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _MatrixMultiply),
    'MatrixMultiplyAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _MatrixMultiplyAssign),
    'Minus': ('def build(*, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_after is _MISSING: whitespace_after = _factory0()\n    _set0(node, whitespace_after)\n    return node\n', _Minus),
    'Module': ('def build(*, body, header=_default1, footer=_default2, encoding=_default3, default_indent=_default4, default_newline=_default5, has_trailing_newline=_default6):\n    node = _new(_cls)\n    _set0(node, body)\n    _set1(node, header)\n    _set2(node, footer)\n    _set3(node, encoding)\n    _set4(node, default_indent)\n    _set5(node, default_newline)\n    _set6(node, has_trailing_newline)\n    return node\n', _Module),
    'Modulo': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Modulo),
    'ModuloAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _ModuloAssign),
    'Multiply': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Multiply),
    'MultiplyAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _MultiplyAssign),
    'Name': ('def build(*, value, lpar=_default1, rpar=_default2):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, lpar)\n    _set2(node, rpar)\n    return node\n', _Name),
    'NameItem': ('def build(*, name, comma=_default1):\n    node = _new(_cls)\n    _set0(node, name)\n    _set1(node, comma)\n    return node\n', _NameItem),
    'NamedExpr': ('def build(*, target, value, lpar=_default2, rpar=_default3, whitespace_before_walrus=_MISSING, whitespace_after_walrus=_MISSING):\n    node = _new(_cls)\n    _set0(node, target)\n    _set1(node, value)\n    _set2(node, lpar)\n    _set3(node, rpar)\n    if whitespace_before_walrus is _MISSING: whitespace_before_walrus = _factory4()\n    _set4(node, whitespace_before_walrus)\n    if whitespace_after_walrus is _MISSING: whitespace_after_walrus = _factory5()\n    _set5(node, whitespace_after_walrus)\n    return node\n', _NamedExpr),
    'Newline': ('def build(*, value=_default0):\n    node = _new(_cls)\n    _set0(node, value)\n    return node\n', _Newline),
    'Nonlocal': ('def build(*, names, whitespace_after_nonlocal=_MISSING, semicolon=_default2):\n    node = _new(_cls)\n    _set0(node, names)\n    if whitespace_after_nonlocal is _MISSING: whitespace_after_nonlocal = _factory1()\n    _set1(node, whitespace_after_nonlocal)\n    _set2(node, semicolon)\n    return node\n', _Nonlocal),
    'Not': ('def build(*, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_after is _MISSING: whitespace_after = _factory0()\n    _set0(node, whitespace_after)\n    return node\n', _Not),
    'NotEqual': ('def build(*, value=_default0, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    _set0(node, value)\n    if whitespace_before is _MISSING: whitespace_before = _factory1()\n    _set1(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory2()\n    _set2(node, whitespace_after)\n    return node\n', _NotEqual),
    'NotIn': ('def build(*, whitespace_before=_MISSING, whitespace_between=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_between is _MISSING: whitespace_between = _factory1()\n    _set1(node, whitespace_between)\n    if whitespace_after is _MISSING: whitespace_after = _factory2()\n    _set2(node, whitespace_after)\n    return node\n', _NotIn),
    'Or': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Or),
    'Param': ('def build(*, name, annotation=_default1, equal=_default2, default=_default3, comma=_default4, star=_default5, whitespace_after_star=_MISSING, whitespace_after_param=_MISSING):\n    node = _new(_cls)\n    _set0(node, name)\n    _set1(node, annotation)\n    _set2(node, equal)\n    _set3(node, default)\n    _set4(node, comma)\n    _set5(node, star)\n    if whitespace_after_star is _MISSING: whitespace_after_star = _factory6()\n    _set6(node, whitespace_after_star)\n    if whitespace_after_param is _MISSING: whitespace_after_param = _factory7()\n    _set7(node, whitespace_after_param)\n    return node\n', _Param),
    'ParamSlash': ('def build(*, comma=_default0, whitespace_after=_MISSING):\n    node = _new(_cls)\n    _set0(node, comma)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _ParamSlash),
    'ParamSpec': ('def build(*, name, whitespace_after_star=_MISSING):\n    node = _new(_cls)\n    _set0(node, name)\n    if whitespace_after_star is _MISSING: whitespace_after_star = _factory1()\n    _set1(node, whitespace_after_star)\n    return node\n', _ParamSpec),
    'ParamStar': ('def build(*, comma=_MISSING):\n    node = _new(_cls)\n    if comma is _MISSING: comma = _factory0()\n    _set0(node, comma)\n    return node\n', _ParamStar),
    'Parameters': ('def build(*, params=_default0, star_arg=_default1, kwonly_params=_default2, star_kwarg=_default3, posonly_params=_default4, posonly_ind=_default5):\n    node = _new(_cls)\n    _set0(node, params)\n    _set1(node, star_arg)\n    _set2(node, kwonly_params)\n    _set3(node, star_kwarg)\n    _set4(node, posonly_params)\n    _set5(node, posonly_ind)\n    return node\n', _Parameters),
    'ParenthesizedWhitespace': ('def build(*, first_line=_MISSING, empty_lines=_default1, indent=_default2, last_line=_MISSING):\n    node = _new(_cls)\n    if first_line is _MISSING: first_line = _factory0()\n    _set0(node, first_line)\n    _set1(node, empty_lines)\n    _set2(node, indent)\n    if last_line is _MISSING: last_line = _factory3()\n    _set3(node, last_line)\n    return node\n', _ParenthesizedWhitespace),
    'Pass': ('def build(*, semicolon=_default0):\n    node = _new(_cls)\n    _set0(node, semicolon)\n    return node\n', _Pass),
    'Plus': ('def build(*, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_after is _MISSING: whitespace_after = _factory0()\n    _set0(node, whitespace_after)\n    return node\n', _Plus),
    'Power': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Power),
    'PowerAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _PowerAssign),
    'Raise': ('def build(*, exc=_default0, cause=_default1, whitespace_after_raise=_default2, semicolon=_default3):\n    node = _new(_cls)\n    _set0(node, exc)\n    _set1(node, cause)\n    _set2(node, whitespace_after_raise)\n    _set3(node, semicolon)\n    return node\n', _Raise),
    'Return': ('def build(*, value=_default0, whitespace_after_return=_default1, semicolon=_default2):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, whitespace_after_return)\n    _set2(node, semicolon)\n    return node\n', _Return),
    'RightCurlyBrace': ('def build(*, whitespace_before=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    return node\n', _RightCurlyBrace),
    'RightParen': ('def build(*, whitespace_before=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    return node\n', _RightParen),
    'RightShift': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _RightShift),
    'RightShiftAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _RightShiftAssign),
    'RightSquareBracket': ('def build(*, whitespace_before=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    return node\n', _RightSquareBracket),
    'Semicolon': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Semicolon),
    'Set': ('def build(*, elements, lbrace=_MISSING, rbrace=_MISSING, lpar=_default3, rpar=_default4):\n    node = _new(_cls)\n    _set0(node, elements)\n    if lbrace is _MISSING: lbrace = _factory1()\n    _set1(node, lbrace)\n    if rbrace is _MISSING: rbrace = _factory2()\n    _set2(node, rbrace)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    return node\n', _Set),
    'SetComp': ('def build(*, elt, for_in, lbrace=_MISSING, rbrace=_MISSING, lpar=_default4, rpar=_default5):\n    node = _new(_cls)\n    _set0(node, elt)\n    _set1(node, for_in)\n    if lbrace is _MISSING: lbrace = _factory2()\n    _set2(node, lbrace)\n    if rbrace is _MISSING: rbrace = _factory3()\n    _set3(node, rbrace)\n    _set4(node, lpar)\n    _set5(node, rpar)\n    return node\n', _SetComp),
    'SimpleStatementLine': ('def build(*, body, leading_lines=_default1, trailing_whitespace=_MISSING):\n    node = _new(_cls)\n    _set0(node, body)\n    _set1(node, leading_lines)\n    if trailing_whitespace is _MISSING: trailing_whitespace = _factory2()\n    _set2(node, trailing_whitespace)\n    return node\n', _SimpleStatementLine),
    'SimpleStatementSuite': ('def build(*, body, leading_whitespace=_MISSING, trailing_whitespace=_MISSING):\n    node = _new(_cls)\n    _set0(node, body)\n    if leading_whitespace is _MISSING: leading_whitespace = _factory1()\n    _set1(node, leading_whitespace)\n    if trailing_whitespace is _MISSING: trailing_whitespace = _factory2()\n    _set2(node, trailing_whitespace)\n    return node\n', _SimpleStatementSuite),
    'SimpleString': ('def build(*, value, lpar=_default1, rpar=_default2):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, lpar)\n    _set2(node, rpar)\n    return node\n', _SimpleString),
    'SimpleWhitespace': ('def build(*, value):\n    node = _new(_cls)\n    _set0(node, value)\n    return node\n', _SimpleWhitespace),
    'Slice': ('def build(*, lower, upper, step=_default2, first_colon=_MISSING, second_colon=_default4):\n    node = _new(_cls)\n    _set0(node, lower)\n    _set1(node, upper)\n    _set2(node, step)\n    if first_colon is _MISSING: first_colon = _factory3()\n    _set3(node, first_colon)\n    _set4(node, second_colon)\n    return node\n', _Slice),
    'StarredDictComp': ('def build(*, value, for_in, lbrace=_MISSING, rbrace=_MISSING, lpar=_default4, rpar=_default5, whitespace_before_value=_MISSING):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, for_in)\n    if lbrace is _MISSING: lbrace = _factory2()\n    _set2(node, lbrace)\n    if rbrace is _MISSING: rbrace = _factory3()\n    _set3(node, rbrace)\n    _set4(node, lpar)\n    _set5(node, rpar)\n    if whitespace_before_value is _MISSING: whitespace_before_value = _factory6()\n    _set6(node, whitespace_before_value)\n    return node\n', _StarredDictComp),
    'StarredDictElement': ('def build(*, value, comma=_default1, whitespace_before_value=_MISSING):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, comma)\n    if whitespace_before_value is _MISSING: whitespace_before_value = _factory2()\n    _set2(node, whitespace_before_value)\n    return node\n', _StarredDictElement),
    'StarredElement': ('def build(*, value, comma=_default1, lpar=_default2, rpar=_default3, whitespace_before_value=_MISSING):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, comma)\n    _set2(node, lpar)\n    _set3(node, rpar)\n    if whitespace_before_value is _MISSING: whitespace_before_value = _factory4()\n    _set4(node, whitespace_before_value)\n    return node\n', _StarredElement),
    'Subscript': ('def build(*, value, slice, lbracket=_MISSING, rbracket=_MISSING, lpar=_default4, rpar=_default5, whitespace_after_value=_MISSING):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, slice)\n    if lbracket is _MISSING: lbracket = _factory2()\n    _set2(node, lbracket)\n    if rbracket is _MISSING: rbracket = _factory3()\n    _set3(node, rbracket)\n    _set4(node, lpar)\n    _set5(node, rpar)\n    if whitespace_after_value is _MISSING: whitespace_after_value = _factory6()\n    _set6(node, whitespace_after_value)\n    return node\n', _Subscript),
    'SubscriptElement': ('def build(*, slice, comma=_default1):\n    node = _new(_cls)\n    _set0(node, slice)\n    _set1(node, comma)\n    return node\n', _SubscriptElement),
    'Subtract': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _Subtract),
    'SubtractAssign': ('def build(*, whitespace_before=_MISSING, whitespace_after=_MISSING):\n    node = _new(_cls)\n    if whitespace_before is _MISSING: whitespace_before = _factory0()\n    _set0(node, whitespace_before)\n    if whitespace_after is _MISSING: whitespace_after = _factory1()\n    _set1(node, whitespace_after)\n    return node\n', _SubtractAssign),
    'TemplatedString': ('def build(*, parts, start=_default1, end=_default2, lpar=_default3, rpar=_default4):\n    node = _new(_cls)\n    _set0(node, parts)\n    _set1(node, start)\n    _set2(node, end)\n    _set3(node, lpar)\n    _set4(node, rpar)\n    return node\n', _TemplatedString),
    'TemplatedStringExpression': ('def build(*, expression, conversion=_default1, format_spec=_default2, whitespace_before_expression=_MISSING, whitespace_after_expression=_MISSING, equal=_default5):\n    node = _new(_cls)\n    _set0(node, expression)\n    _set1(node, conversion)\n    _set2(node, format_spec)\n    if whitespace_before_expression is _MISSING: whitespace_before_expression = _factory3()\n    _set3(node, whitespace_before_expression)\n    if whitespace_after_expression is _MISSING: whitespace_after_expression = _factory4()\n    _set4(node, whitespace_after_expression)\n    _set5(node, equal)\n    return node\n', _TemplatedStringExpression),
    'TemplatedStringText': ('def build(*, value):\n    node = _new(_cls)\n    _set0(node, value)\n    return node\n', _TemplatedStringText),
    'TrailingWhitespace': ('def build(*, whitespace=_MISSING, comment=_default1, newline=_MISSING):\n    node = _new(_cls)\n    if whitespace is _MISSING: whitespace = _factory0()\n    _set0(node, whitespace)\n    _set1(node, comment)\n    if newline is _MISSING: newline = _factory2()\n    _set2(node, newline)\n    return node\n', _TrailingWhitespace),
    'Try': ('def build(*, body, handlers=_default1, orelse=_default2, finalbody=_default3, leading_lines=_default4, whitespace_before_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, body)\n    _set1(node, handlers)\n    _set2(node, orelse)\n    _set3(node, finalbody)\n    _set4(node, leading_lines)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory5()\n    _set5(node, whitespace_before_colon)\n    return node\n', _Try),
    'TryStar': ('def build(*, body, handlers, orelse=_default2, finalbody=_default3, leading_lines=_default4, whitespace_before_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, body)\n    _set1(node, handlers)\n    _set2(node, orelse)\n    _set3(node, finalbody)\n    _set4(node, leading_lines)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory5()\n    _set5(node, whitespace_before_colon)\n    return node\n', _TryStar),
    'Tuple': ('def build(*, elements, lpar=_MISSING, rpar=_MISSING):\n    node = _new(_cls)\n    _set0(node, elements)\n    if lpar is _MISSING: lpar = _factory1()\n    _set1(node, lpar)\n    if rpar is _MISSING: rpar = _factory2()\n    _set2(node, rpar)\n    return node\n', _Tuple),
    'TypeAlias': ('def build(*, name, value, type_parameters=_default2, whitespace_after_type=_MISSING, whitespace_after_name=_default4, whitespace_after_type_parameters=_default5, whitespace_after_equals=_MISSING, semicolon=_default7):\n    node = _new(_cls)\n    _set0(node, name)\n    _set1(node, value)\n    _set2(node, type_parameters)\n    if whitespace_after_type is _MISSING: whitespace_after_type = _factory3()\n    _set3(node, whitespace_after_type)\n    _set4(node, whitespace_after_name)\n    _set5(node, whitespace_after_type_parameters)\n    if whitespace_after_equals is _MISSING: whitespace_after_equals = _factory6()\n    _set6(node, whitespace_after_equals)\n    _set7(node, semicolon)\n    return node\n', _TypeAlias),
    'TypeParam': ('def build(*, param, comma=_default1, equal=_default2, star=_default3, whitespace_after_star=_MISSING, default=_default5):\n    node = _new(_cls)\n    _set0(node, param)\n    _set1(node, comma)\n    _set2(node, equal)\n    _set3(node, star)\n    if whitespace_after_star is _MISSING: whitespace_after_star = _factory4()\n    _set4(node, whitespace_after_star)\n    _set5(node, default)\n    return node\n', _TypeParam),
    'TypeParameters': ('def build(*, params=_default0, lbracket=_MISSING, rbracket=_MISSING):\n    node = _new(_cls)\n    _set0(node, params)\n    if lbracket is _MISSING: lbracket = _factory1()\n    _set1(node, lbracket)\n    if rbracket is _MISSING: rbracket = _factory2()\n    _set2(node, rbracket)\n    return node\n', _TypeParameters),
    'TypeVar': ('def build(*, name, bound=_default1, colon=_default2):\n    node = _new(_cls)\n    _set0(node, name)\n    _set1(node, bound)\n    _set2(node, colon)\n    return node\n', _TypeVar),
    'TypeVarTuple': ('def build(*, name, whitespace_after_star=_MISSING):\n    node = _new(_cls)\n    _set0(node, name)\n    if whitespace_after_star is _MISSING: whitespace_after_star = _factory1()\n    _set1(node, whitespace_after_star)\n    return node\n', _TypeVarTuple),
    'UnaryOperation': ('def build(*, operator, expression, lpar=_default2, rpar=_default3):\n    node = _new(_cls)\n    _set0(node, operator)\n    _set1(node, expression)\n    _set2(node, lpar)\n    _set3(node, rpar)\n    return node\n', _UnaryOperation),
    'While': ('def build(*, test, body, orelse=_default2, leading_lines=_default3, whitespace_after_while=_MISSING, whitespace_before_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, test)\n    _set1(node, body)\n    _set2(node, orelse)\n    _set3(node, leading_lines)\n    if whitespace_after_while is _MISSING: whitespace_after_while = _factory4()\n    _set4(node, whitespace_after_while)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory5()\n    _set5(node, whitespace_before_colon)\n    return node\n', _While),
    'With': ('def build(*, items, body, asynchronous=_default2, leading_lines=_default3, lpar=_default4, rpar=_default5, whitespace_after_with=_MISSING, whitespace_before_colon=_MISSING):\n    node = _new(_cls)\n    _set0(node, items)\n    _set1(node, body)\n    _set2(node, asynchronous)\n    _set3(node, leading_lines)\n    _set4(node, lpar)\n    _set5(node, rpar)\n    if whitespace_after_with is _MISSING: whitespace_after_with = _factory6()\n    _set6(node, whitespace_after_with)\n    if whitespace_before_colon is _MISSING: whitespace_before_colon = _factory7()\n    _set7(node, whitespace_before_colon)\n    return node\n', _With),
    'WithItem': ('def build(*, item, asname=_default1, comma=_default2):\n    node = _new(_cls)\n    _set0(node, item)\n    _set1(node, asname)\n    _set2(node, comma)\n    return node\n', _WithItem),
    'Yield': ('def build(*, value=_default0, lpar=_default1, rpar=_default2, whitespace_after_yield=_default3):\n    node = _new(_cls)\n    _set0(node, value)\n    _set1(node, lpar)\n    _set2(node, rpar)\n    _set3(node, whitespace_after_yield)\n    return node\n', _Yield),
}
