package Cache::Memcached::RustXS::ClientInternals;

# Everything this distribution relies on inside Cache::Memcached and
# Cache::Memcached::Fast, in one place: the versions each reliance was
# checked against, how each internal is identified before it is used, and
# the fallback when it is not there. See the POD at the end of the file.

use strict;
use warnings;

use Carp ();
use Scalar::Util ();

our $VERSION = '1.000';

# The releases whose sources were read for what this module relies on
# (they are in the project's client matrix).
our @CACHE_MEMCACHED_VERSIONS = qw(1.24 1.25 1.26 1.27 1.28 1.29 1.30);
our @FAST_VERSIONS            = qw(0.21 0.25 0.26 0.27 0.28);

# ---------------------------------------------------------------------------
# Cache::Memcached's finalize closure (for GetParser's inline finalize)

# The finalize closure of Cache::Memcached::_load_multi, as the source of
# every release in @CACHE_MEMCACHED_VERSIONS has it (comments left out),
# under the pragmas its file compiles it with (they set op flags). It
# is compiled here, in the perl that runs, and its op tree compared with the
# client's: equal trees do the same thing, whatever the version number says.
my $FINALIZE_SOURCE = <<'PERL';
package Cache::Memcached;
use strict;
use warnings;
no strict 'refs';
my $ret;
sub {
    my $map = $_[0];
    $map = {@_} unless ref $map;

    while (my ($k, $flags) = each %$map) {
        chop $ret->{$k}; chop $ret->{$k};

        $ret->{$k} = Compress::Zlib::memGunzip($ret->{$k})
            if $HAVE_ZLIB && $flags & F_COMPRESS;
        if ($flags & F_STORABLE) {
            eval {
                $ret->{$k} = Storable::thaw($ret->{$k});
            };
            if ($@) {
                delete $ret->{$k};
            }
        }
    }
};
PERL

# The address of the op tree of the finalize closure in the
# Cache::Memcached::_load_multi loaded now, or 0 when it has none whose code
# is the known finalize's. The XS (finalize_is_known) compares each on_item's
# op tree with it: all closures made from one anonymous sub share its op
# tree. Called again whenever _load_multi or $Cache::Memcached::VERSION
# changes.
sub finalize_root {
    my $root = eval { _finalize_root() };
    return $root || 0;    # none found, or the known code did not compile here
}

sub _finalize_root {
    return 0 unless defined &Cache::Memcached::_load_multi
                 && defined &Cache::Memcached::F_COMPRESS && defined &Cache::Memcached::F_STORABLE;
    require B;
    my $load_multi = B::svref_2object(\&Cache::Memcached::_load_multi);
    my (undef, $pad) = $load_multi->PADLIST->ARRAY;
    my $known = _known_finalize_shape();
    my @finalize = grep {
        $_->isa('B::CV') && ($_->CvFLAGS & B::CVf_ANON()) && ${ $_->ROOT }
            && _op_shape($_) eq $known
    } $pad->ARRAY;
    return @finalize == 1 ? ${ $finalize[0]->ROOT } : 0;
}

# Whether the code reference is a closure whose code is the known finalize's.
# finalize_root as last looked up, and the _load_multi (held, so its
# address is not reused) and $Cache::Memcached::VERSION it was for: looked
# up again only when either is another.
my ($root_of_load_multi, $root_for_version, $finalize_root) = (undef, '', 0);

sub is_load_multi_finalize {
    my ($code) = @_;
    return 0 unless ref $code eq 'CODE' && defined &Cache::Memcached::_load_multi
                 && defined $Cache::Memcached::VERSION;
    my $load_multi = \&Cache::Memcached::_load_multi;
    if (!$root_of_load_multi || Scalar::Util::refaddr($load_multi) != Scalar::Util::refaddr($root_of_load_multi)
        || $Cache::Memcached::VERSION ne $root_for_version) {
        ($root_of_load_multi, $root_for_version) = ($load_multi, $Cache::Memcached::VERSION);
        $finalize_root = finalize_root();
    }
    return 0 unless $finalize_root;
    # Every closure of one anonymous sub shares its op tree.
    return ${ B::svref_2object($code)->ROOT } == $finalize_root ? 1 : 0;
}

sub is_known_finalize {
    my ($code) = @_;
    return 0 unless ref $code eq 'CODE' && defined &Cache::Memcached::F_COMPRESS;
    require B;
    my $cv = B::svref_2object($code);
    return ${ $cv->ROOT } && _op_shape($cv) eq _known_finalize_shape() ? 1 : 0;
}

my $known_shape;

sub _known_finalize_shape {
    return $known_shape if defined $known_shape;
    my $code = eval $FINALIZE_SOURCE;    ## no critic (ProhibitStringyEval)
    Carp::croak("the known finalize does not compile: $@") unless $code;
    require B;
    return $known_shape = _op_shape(B::svref_2object($code));
}

# The op tree of a sub as text: each op's name and private flags (which
# tell, for example, a delete from an exists) in tree order, with the name
# of each glob and the value of each constant it refers to. Pad offsets and
# line numbers are left out: they differ between two compilations of the
# same code.
sub _op_shape {
    my ($cv) = @_;
    my (undef, $pad) = $cv->PADLIST->ARRAY;
    my @shape;
    my @todo = ($cv->ROOT);
    while (@todo) {
        my $op = pop @todo;
        next unless $$op;
        push @shape, $op->name . '/' . $op->private . _op_operand($op, $pad);
        my @kids;
        if ($op->flags & B::OPf_KIDS()) {
            for (my $kid = $op->first; $$kid; $kid = $kid->sibling) {
                push @kids, $kid;
            }
        }
        push @todo, reverse @kids;
    }
    return join ' ', @shape;
}

# What a glob or constant op refers to, as "(name)" or "(value)"; '' for
# other ops. Threaded perls keep the glob or constant in the sub's pad.
sub _op_operand {
    my ($op, $pad) = @_;
    my $sv;
    if ($op->isa('B::PADOP')) {
        $sv = ($pad->ARRAY)[ $op->padix ];
    } elsif ($op->isa('B::SVOP')) {
        $sv = $op->sv;
        $sv = ($pad->ARRAY)[ $op->targ ] if !$$sv && $op->targ;
    } else {
        return '';
    }
    return '' unless $sv && $$sv;
    return '(' . $sv->STASH->NAME . '::' . $sv->NAME . ')' if $sv->isa('B::GV');
    return '(' . ${ $sv->object_2svref } . ')' if $sv->isa('B::IV') || $sv->isa('B::PV') || $sv->isa('B::NV');
    return '(' . ref($sv) . ')';
}

# ---------------------------------------------------------------------------
# Cache::Memcached's set, add and replace (for RustXS::Memcached's zstd)

# '' when this Cache::Memcached compresses as the known releases do: set,
# add and replace call _set, and _set calls Compress::Zlib::memGzip by its
# full name; else why not, in one sentence.
sub memgzip_redirect_unavailable {
    my $version = defined $Cache::Memcached::VERSION ? $Cache::Memcached::VERSION : 'of no version';
    my $known = "as Cache::Memcached $CACHE_MEMCACHED_VERSIONS[0] to $CACHE_MEMCACHED_VERSIONS[-1] do";
    return "Cache::Memcached is not loaded" unless defined &Cache::Memcached::_set;
    require B;
    return "Cache::Memcached $version: its _set does not call Compress::Zlib::memGzip ($known)"
        unless _sub_calls(\&Cache::Memcached::_set, 'Compress::Zlib::memGzip');
    for my $command (qw(set add replace)) {
        my $method = Cache::Memcached->can($command);
        return "Cache::Memcached $version: its $command does not call _set ($known)"
            unless $method && _sub_calls($method, 'Cache::Memcached::_set');
    }
    return '';
}

# Whether the op tree of the sub calls the function of that full name.
sub _sub_calls {
    my ($code, $name) = @_;
    my $cv = B::svref_2object($code);
    return 0 unless ${ $cv->ROOT };
    return _op_shape($cv) =~ m{(?:\A| )gv/\d+\(\Q$name\E\)} ? 1 : 0;
}

# Runs $code (a Cache::Memcached method call, with its arguments) so that
# Compress::Zlib::memGzip, when Cache::Memcached::_set calls it for the
# object $self, is $writer; for any other caller -- another object's _set,
# a stat_callback, a signal handler or a Storable hook that compresses -- it
# stays what it was. The object is told by the arguments of the _set frame
# that called memGzip, which caller() gives in @DB::args as Carp reads them.
sub with_memgzip_for {
    my ($self, $writer, $code, @args) = @_;
    my $object = Scalar::Util::refaddr($self);
    my $original = \&Compress::Zlib::memGzip;
    # Perl 5.30 and older warn "Subroutine ... redefined" here.
    no warnings 'redefine';
    local *Compress::Zlib::memGzip = sub {
        return $writer->($_[0]) if _called_by_set_of($object);
        return $original->(@_);
    };
    return $code->(@args);
}

# The share of a value that Cache::Memcached's _set wants compression to
# save before it stores the compressed value (its constant COMPRESS_SAVINGS,
# 0.20 in 1.24 to 1.30), looked up rather than assumed: a release without it
# gets the same 0.20, with a warning.
my $DEFAULT_COMPRESS_SAVINGS = 0.20;
sub compress_savings {
    my $savings = Cache::Memcached->can('COMPRESS_SAVINGS');
    return $savings->() if $savings;
    Carp::carp('Cache::Memcached ' . (defined $Cache::Memcached::VERSION ? $Cache::Memcached::VERSION : '?')
             . " has no COMPRESS_SAVINGS: assuming $DEFAULT_COMPRESS_SAVINGS");
    return $DEFAULT_COMPRESS_SAVINGS;
}

# Whether the caller of the caller of this function is Cache::Memcached::_set
# called for the object at that address.
sub _called_by_set_of {
    my ($object) = @_;
    my @frame;
    {
        package DB;    ## no critic (ProhibitMultiplePackages)
        @frame = caller 2;
    }
    return 0 unless @frame && $frame[3] eq 'Cache::Memcached::_set' && $frame[4];
    my $self = $DB::args[1];    # _set($cmdname, $self, $key, $val, ...)
    @DB::args = ();
    return ref $self && Scalar::Util::refaddr($self) == $object ? 1 : 0;
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::ClientInternals - what this distribution relies on inside Cache::Memcached and Cache::Memcached::Fast (private)

=head1 SYNOPSIS

    use Cache::Memcached;
    use Cache::Memcached::RustXS::ClientInternals;

    my $why = Cache::Memcached::RustXS::ClientInternals::memgzip_redirect_unavailable();
    print $why eq '' ? "zstd writing works with this Cache::Memcached\n" : "$why\n";
    print "finalize recognised\n" if Cache::Memcached::RustXS::ClientInternals::finalize_root();
    print "not a finalize\n" unless Cache::Memcached::RustXS::ClientInternals::is_load_multi_finalize(sub { });

=head1 DESCRIPTION

This module is private: its interface may change in any release. It is the
one place that knows the clients' internals; every other module asks it. For
each internal it says which releases were read, how the internal is
identified before it is used, and what happens when it is not found.

=head2 Client versions

C<@CACHE_MEMCACHED_VERSIONS> (1.24 to 1.30) and C<@FAST_VERSIONS> (0.21,
0.25 to 0.28) are the releases whose sources were read for what follows, and
which the project's client matrix (F<script/client-matrix>) tests. Nothing
is refused for being another version: each internal is identified by what it
is, not by the version number.

=head2 Cache::Memcached's finalize (GetParser's inline finalize)

L<Cache::Memcached::RustXS::GetParser> finishes plain values itself when its
C<on_item> is the finalize closure of C<Cache::Memcached::_load_multi>. That
closure is the same in every release from 1.24 to 1.30. C<finalize_root>
compiles that known code in the running perl and compares its op tree (op
names, and the globs and constants the ops refer to) with each anonymous sub
in C<_load_multi>; the one that matches is the finalize. GetParser's C<new>
asks C<is_load_multi_finalize($on_item)>, which compares the address of
C<$on_item>'s op tree with that one's (the look-up is kept until
C<_load_multi> or C<$Cache::Memcached::VERSION> changes). A release whose
finalize is different code has none that matches: GetParser then hands every
value to C<on_item>, as any other parser does, and C<inline_finalize> is
false. C<is_known_finalize($code)> says whether a code reference's code is
the known finalize's.

=head2 Cache::Memcached's compression (RustXS::Memcached's zstd)

Cache::Memcached compresses in C<_set>, called by C<set>, C<add> and
C<replace>, with C<Compress::Zlib::memGzip> called by its full name; there
is no hook. C<memgzip_redirect_unavailable> checks those calls in the op
trees of the loaded Cache::Memcached and returns the empty string when they
are there, or why not. C<with_memgzip_for($self, $writer, $code, @args)>
runs C<< $code->(@args) >> with C<memGzip> standing for C<$writer> where, and
only where, it is called by C<Cache::Memcached::_set> for the object
C<$self>: the caller's sub name and the object among its arguments (as
L<Carp> reads them), not a count of stack frames. Any other caller gets the
C<memGzip> that was there.

=head2 Cache::Memcached::Fast's decompressor

Every Cache::Memcached::Fast from 0.21 calls C<compress_methods> the same
way. Before 0.28, an object made without C<compress_threshold> has no
decompressor at all and croaks ("Not a CODE reference") or misreads a
C<get_multi> on any compressed value; with C<compress_threshold> set (or
C<compress_methods> given) it reads them.

=head1 FUNCTIONS

=over 4

=item finalize_root()

The address of the op tree of the finalize closure in the loaded
C<Cache::Memcached::_load_multi>, or 0 when none is the known finalize's
code (or Cache::Memcached is not loaded). Never dies.

=item is_load_multi_finalize($code)

True when the code reference is a closure of the finalize that
C<finalize_root> finds (its op tree is that one). Never dies.

=item is_known_finalize($code)

True when the code reference's code is the known finalize's.

=item memgzip_redirect_unavailable()

The empty string when the loaded Cache::Memcached compresses in C<_set>
through C<Compress::Zlib::memGzip>, called by C<set>, C<add> and C<replace>;
else the reason, one sentence.

=item with_memgzip_for($self, $writer, $code, @args)

C<< $code->(@args) >>, with C<Compress::Zlib::memGzip> standing for
C<$writer> for calls from C<Cache::Memcached::_set> for C<$self>.

=item compress_savings()

The share of a value that compression must save before Cache::Memcached's
C<_set> stores the compressed value (its constant C<COMPRESS_SAVINGS>: it
keeps the compressed value when that is strictly smaller than the value
times one minus it), looked up in the loaded Cache::Memcached; 0.20, with a
warning, for a release without the constant.

=back

=head1 SEE ALSO

L<Cache::Memcached::RustXS::GetParser> and
L<Cache::Memcached::RustXS::Memcached>, which rely on what this module
finds; L<Cache::Memcached::RustXS::Zstd/ROLLING OUT AND BACK>, what each
client release does with a compressed value; L<Cache::Memcached>,
L<Cache::Memcached::Fast>.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
