package Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest;

# The manifest of a dictionary set as bytes: its format (parse, check,
# write out), its dates, and the atomic write of its files. No state over
# time and no IDs: DictionarySet::State and DictionarySet::IDs hold those.

use strict;
use warnings;

use Carp ();
use Digest::SHA ();
use Exporter 5.57 'import';
use Fcntl qw(O_WRONLY O_CREAT O_EXCL);
use File::Spec ();
use IO::Handle ();
use POSIX ();
use Time::Local ();
use Cache::Memcached::RustXS ();

our $VERSION = '1.000';

our @EXPORT_OK = qw(
    $FORMAT $MANIFEST_NAME $MAX_ID $MIN_LEVEL $MAX_LEVEL
    manifest_date epoch_of is_date is_count is_percent is_id is_level shown
    parse_manifest manifest_text check_fallback_fields slurp atomic_write manifest_path
    file_mismatch header_id
);

our $FORMAT        = 1;                       # the format version this module reads and writes
our $MANIFEST_NAME = 'manifest';
my $MAGIC_WORD     = 'cmrx-dictionary-set';
my $DICT_MAGIC     = "\x37\xa4\x30\xec";      # zstd dictionary magic, little-endian
my $DICT_HEADER    = 8;                       # magic and ID
our $MAX_ID        = 4294967295;              # IDs are 32-bit, 0 means none
my %LEVELS         = Cache::Memcached::RustXS::_level_ranges();    # the engine's (cmrx.h)
our $MIN_LEVEL     = $LEVELS{zstd_min};
our $MAX_LEVEL     = $LEVELS{zstd_max};
my %FALLBACK_METHODS = (zstd => 1, gzip => 1);
my %GZIP_LEVELS  = map { ($_ => 1) } $LEVELS{gzip_min} .. $LEVELS{gzip_max};    # libdeflate's
my %STATES       = (current => 1, retired => 1);

# Fields of each kind of line, in the order they are written; any other
# field (a lower-case name) is kept as it is and written after these.
my @SET_FIELDS        = qw(id created);
my @FALLBACK_FIELDS   = qw(method level savings samples measured);
our @DICTIONARY_FIELDS = qw(id prefix state decided current_from file level size sha256 savings samples trained retired);
my @REMOVED_FIELDS    = qw(id prefix removed);
my %LINE;    # how each kind of line is read: below parse_manifest
our %REQUIRED = (
    set        => [qw(id)],
    fallback   => [qw(method level)],
    dictionary => [qw(id prefix state file level size sha256)],
    removed    => [qw(id)],
);
# ---- values in the manifest ------------------------------------------------

# Bytes outside printable ASCII, and %, are written as %XX, so that a value
# never holds a space and the file reads as text.
sub _encode_value {
    my ($v) = @_;
    $v =~ s/([^\x21-\x24\x26-\x7e])/sprintf '%%%02X', ord $1/ge;
    return $v;
}

sub _decode_value {
    my ($v) = @_;
    $v =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge;
    return $v;
}

sub _is_int     { defined $_[0] && $_[0] =~ /\A(?:0|-?[1-9][0-9]{0,9})\z/ }
sub is_count   { defined $_[0] && $_[0] =~ /\A(?:0|[1-9][0-9]{0,15})\z/ }
sub is_percent { defined $_[0] && $_[0] =~ /\A-?[0-9]{1,3}(?:\.[0-9]{1,6})?\z/ }
sub is_date    { defined $_[0] && $_[0] =~ /\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\z/ }
sub is_id      { is_count($_[0]) && $_[0] >= 1 && $_[0] <= $MAX_ID }
sub is_level   { _is_int($_[0]) && $_[0] >= $MIN_LEVEL && $_[0] <= $MAX_LEVEL }
sub _is_file    { defined $_[0] && $_[0] =~ /\A[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}\z/ }

# ---- dates -------------------------------------------------------------------

# A date as the manifest writes it: ISO 8601 in UTC, to the second. Takes
# epoch seconds (a fraction is dropped) or such a string; undef gives undef.
# With $what, anything else croaks naming it; without, it gives undef.
sub manifest_date {
    my ($v, $what) = @_;
    return undef unless defined $v;
    return $v if is_date($v);
    unless ($v =~ /\A[0-9]+(?:\.[0-9]*)?\z/) {
        return undef unless defined $what;
        Carp::croak("$what must be epoch seconds or YYYY-MM-DDTHH:MM:SSZ, not " . shown($v));
    }
    return POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime int $v);
}

# Epoch seconds of a manifest date, or undef. The state of a set is asked
# for often and its dates are few: they are remembered (a bounded number).
my %EPOCH_OF;
my $EPOCHS_KEPT = 4096;

sub epoch_of {
    my ($date) = @_;
    return undef unless defined $date;
    return $EPOCH_OF{$date} if exists $EPOCH_OF{$date};
    %EPOCH_OF = () if keys %EPOCH_OF >= $EPOCHS_KEPT;
    return $EPOCH_OF{$date} = _epoch_of($date);
}

sub _epoch_of {
    my ($date) = @_;
    my @t = defined $date ? $date =~ /\A([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z\z/ : ();
    return undef unless @t;
    my $epoch = eval { Time::Local::timegm($t[5], $t[4], $t[3], $t[2], $t[1] - 1, $t[0]) };
    return $epoch;
}

sub shown { defined $_[0] ? "'" . _encode_value($_[0]) . "'" : 'undef' }

# ---- reading -------------------------------------------------------------------

sub manifest_path { File::Spec->catfile($_[0], $MANIFEST_NAME) }

sub slurp {
    my ($path) = @_;
    open my $fh, '<', $path or return;
    binmode $fh;
    my $bytes = do { local $/; <$fh> };
    close $fh;
    return $bytes;
}


# The manifest's bytes, parsed and checked; dies with "line N: why".
sub parse_manifest {
    my ($dir, $bytes) = @_;
    my %self = (dir => $dir, manifest_sha256 => Digest::SHA::sha256_hex($bytes),
                entries => [], removed => [], fallback => undef);
    my %seen = (by_id => {}, by_file => {}, current => {});
    my ($n, $format, $ended) = (0, undef, undef);
    my @lines = split /\n/, $bytes, -1;
    die "line 1: empty: not a dictionary set manifest (or truncated to nothing)\n" unless length $bytes;
    die "truncated: the last line has no newline\n" if length $lines[-1];
    pop @lines;
    for my $line (@lines) {
        $n++;
        next if $line =~ /\A(?:#.*)?\z/;
        my $at = "line $n";
        die "$at: after the end line\n" if $ended;
        if (!defined $format) {
            $format = _format_of($line, $at);
            next;
        }
        my ($kind, $f) = _fields_of($line, $at);
        my $take = $LINE{$kind} or die "$at: unknown line '" . _encode_value($kind) . "'\n";
        $ended = $take->(\%self, $f, $at, \%seen);
    }
    die "not a dictionary set manifest (no '$MAGIC_WORD' line)\n" unless defined $format;
    die "no set line\n" unless $self{identity};
    die "truncated: no end line\n" unless $ended;
    $self{format} = $format;
    return \%self;
}

# The format version of the first line.
sub _format_of {
    my ($line, $at) = @_;
    die "$at: not a dictionary set manifest (it must start with '$MAGIC_WORD $FORMAT')\n"
        unless $line =~ /\A\Q$MAGIC_WORD\E ([0-9]+)\z/;
    my $format = $1;
    die "$at: format $format is newer than this reader knows ($FORMAT): upgrade "
      . "Cache::Memcached::RustXS\n" if $format > $FORMAT;
    die "$at: format $format is unknown\n" if $format < 1;
    return $format;
}

# A line's kind and fields, with the ones its kind needs.
sub _fields_of {
    my ($line, $at) = @_;
    my ($kind, @tokens) = split / /, $line;
    my %f;
    for my $t (@tokens) {
        die "$at: '$t' is not a field (name=value)\n" unless $t =~ /\A([a-z][a-z0-9_]*)=(.*)\z/s;
        die "$at: field $1 given twice\n" if exists $f{$1};
        $f{$1} = _decode_value($2);
    }
    for my $need (@{ $REQUIRED{$kind} || [] }) {
        die "$at: $kind line without its $need (truncated or edited?)\n" unless defined $f{$need};
    }
    return ($kind, \%f);
}

# Each kind of line taken into the set being parsed; true for the end line.
%LINE = (
    set => sub {
        my ($self, $f, $at) = @_;
        die "$at: a second set line\n" if $self->{identity};
        die "$at: set id must be 32 hexadecimal digits, not " . shown($f->{id}) . "\n"
            unless $f->{id} =~ /\A[0-9a-f]{32}\z/;
        die "$at: created must be YYYY-MM-DDTHH:MM:SSZ\n" if defined $f->{created} && !is_date($f->{created});
        @$self{qw(identity set_fields)} = ($f->{id}, $f);
        return 0;
    },
    fallback => sub {
        my ($self, $f, $at) = @_;
        die "$at: a second fallback line\n" if $self->{fallback};
        check_fallback_fields($f, $at);
        $self->{fallback} = $f;
        return 0;
    },
    dictionary => sub {
        my ($self, $f, $at, $seen) = @_;
        die "$at: dictionary before the set line\n" unless $self->{identity};
        _check_entry($f, $at);
        # current_from_copy, which development versions wrote beside
        # current_from for a 0.101 that would drop it (the shipped 0.101
        # keeps it): beside current_from it says nothing more and is
        # dropped; without it, it still says when.
        delete $f->{current_from_copy} if defined $f->{current_from};
        if (my $other = $seen->{by_id}{ $f->{id} }) {
            die "$at: dictionary ID $f->{id} is listed twice (also for prefix "
              . shown($other->{prefix}) . "): two dictionaries with one ID are refused\n";
        }
        die "$at: file $f->{file} is listed twice\n" if $seen->{by_file}{ $f->{file} };
        if ($f->{state} eq 'current') {
            my $current = $seen->{current};
            die "$at: prefix " . shown($f->{prefix}) . " has two current dictionaries ("
              . "IDs $current->{ $f->{prefix} }{id} and $f->{id})\n" if $current->{ $f->{prefix} };
            $current->{ $f->{prefix} } = $f;
        }
        $seen->{by_id}{ $f->{id} } = $seen->{by_file}{ $f->{file} } = $f;
        push @{ $self->{entries} }, $f;
        return 0;
    },
    removed => sub {
        my ($self, $f, $at, $seen) = @_;
        die "$at: removed before the set line\n" unless $self->{identity};
        die "$at: removed id must be 1 to $MAX_ID, not " . shown($f->{id}) . "\n" unless is_id($f->{id});
        die "$at: removed must be YYYY-MM-DDTHH:MM:SSZ\n" if defined $f->{removed} && !is_date($f->{removed});
        die "$at: dictionary ID $f->{id} is listed twice (once removed): two dictionaries with one ID are refused\n"
            if $seen->{by_id}{ $f->{id} };
        $seen->{by_id}{ $f->{id} } = $f;
        push @{ $self->{removed} }, $f;
        return 0;
    },
    end => sub {
        my ($self, $f, $at) = @_;
        die "$at: end line without the number of dictionaries\n"
            unless defined $f->{dictionaries} && is_count($f->{dictionaries});
        my $have = @{ $self->{entries} };
        die "$at: the end line counts $f->{dictionaries} dictionaries, $have are listed (truncated?)\n"
            if $f->{dictionaries} != $have;
        my $removed = defined $f->{removed} ? $f->{removed} : 0;
        die "$at: the end line counts " . shown($removed) . ' removed dictionaries, '
          . @{ $self->{removed} } . " are listed (truncated?)\n"
            unless is_count($removed) && $removed == @{ $self->{removed} };
        return 1;
    },
);

sub check_fallback_fields {
    my ($f, $at) = @_;
    die "$at: fallback method must be zstd or gzip, not " . shown($f->{method}) . "\n"
        unless $FALLBACK_METHODS{ $f->{method} };
    if ($f->{method} eq 'zstd') {
        die "$at: fallback level must be a zstd level ($MIN_LEVEL to $MAX_LEVEL), not " . shown($f->{level}) . "\n"
            unless is_level($f->{level});
    }
    else {
        die "$at: fallback level must be a gzip level ($LEVELS{gzip_min} to $LEVELS{gzip_max}), not "
            . shown($f->{level}) . "\n"
            unless _is_int($f->{level}) && $GZIP_LEVELS{ $f->{level} };
    }
    _check_measures($f, $at, 'measured');
    return;
}

sub _check_measures {
    my ($f, $at, $date) = @_;
    die "$at: savings must be a percentage (a decimal number), not " . shown($f->{savings}) . "\n"
        if defined $f->{savings} && !is_percent($f->{savings});
    die "$at: samples must be a count, not " . shown($f->{samples}) . "\n"
        if defined $f->{samples} && !is_count($f->{samples});
    die "$at: $date must be YYYY-MM-DDTHH:MM:SSZ, not " . shown($f->{$date}) . "\n"
        if defined $f->{$date} && !is_date($f->{$date});
    return;
}

sub _check_entry {
    my ($f, $at) = @_;
    die "$at: dictionary id must be 1 to $MAX_ID, not " . shown($f->{id}) . "\n" unless is_id($f->{id});
    die "$at: state must be current or retired, not " . shown($f->{state}) . "\n" unless $STATES{ $f->{state} };
    die "$at: file must be a plain name inside the set's folder, not " . shown($f->{file}) . "\n"
        unless _is_file($f->{file}) && $f->{file} ne $MANIFEST_NAME;
    die "$at: level must be a zstd level ($MIN_LEVEL to $MAX_LEVEL), not " . shown($f->{level}) . "\n"
        unless is_level($f->{level});
    die "$at: size must be a number of bytes, not " . shown($f->{size}) . "\n"
        unless is_count($f->{size}) && $f->{size} > $DICT_HEADER;
    die "$at: sha256 must be 64 lower-case hexadecimal digits\n" unless $f->{sha256} =~ /\A[0-9a-f]{64}\z/;
    _check_measures($f, $at, 'trained');
    die "$at: retired must be YYYY-MM-DDTHH:MM:SSZ, not " . shown($f->{retired}) . "\n"
        if defined $f->{retired} && !is_date($f->{retired});
    die "$at: current_from must be YYYY-MM-DDTHH:MM:SSZ, not " . shown($f->{current_from}) . "\n"
        if defined $f->{current_from} && !is_date($f->{current_from});
    return;
}


# ---- writing -------------------------------------------------------------------

# The text of the manifest of $set (the hash DictionarySet keeps).
sub manifest_text {
    my ($set) = @_;
    my @out = ("$MAGIC_WORD $set->{format}",
               '# A zstd dictionary set: Cache::Memcached::RustXS::Zstd::DictionarySet describes this file.',
               _line('set', { %{ $set->{set_fields} || {} }, id => $set->{identity} }, \@SET_FIELDS));
    push @out, _line('fallback', $set->{fallback}, \@FALLBACK_FIELDS) if $set->{fallback};
    push @out, _line('dictionary', $_, \@DICTIONARY_FIELDS) for @{ $set->{entries} };
    push @out, _line('removed', $_, \@REMOVED_FIELDS) for @{ $set->{removed} };
    push @out, 'end dictionaries=' . scalar(@{ $set->{entries} })
             . (@{ $set->{removed} } ? ' removed=' . scalar @{ $set->{removed} } : '');
    return join "\n", @out, '';
}

sub _line {
    my ($kind, $f, $order) = @_;
    my %known = map { ($_ => 1) } @$order;
    my @names = ((grep { defined $f->{$_} } @$order), sort grep { !$known{$_} && defined $f->{$_} } keys %$f);
    return join ' ', $kind, map { "$_=" . _encode_value($f->{$_}) } @names;
}


# Writes $bytes to $path through a new file in the same folder and a rename.
sub atomic_write {
    my ($path, $bytes) = @_;
    my $tmp;
    my $fh;
    for my $try (1 .. 100) {
        $tmp = sprintf '%s.tmp-%d-%d', $path, $$, int rand 1e9;
        last if sysopen $fh, $tmp, O_WRONLY | O_CREAT | O_EXCL, 0644;
        Carp::croak("write: cannot create $tmp: $!") unless $!{EEXIST};
        undef $fh;
    }
    Carp::croak("write: cannot create a temporary file beside $path") unless $fh;
    binmode $fh;
    my $ok = (print {$fh} $bytes) && $fh->flush && $fh->sync;
    my $err = $!;
    $ok = close($fh) && $ok;
    $err = $! unless $ok || $err;
    if (!$ok || !rename $tmp, $path) {
        $err = $! if $ok;
        unlink $tmp;
        Carp::croak("write: cannot write $path: $err");
    }
    return;
}


# ---- dictionary files ------------------------------------------------------------

# Why $bytes are not the file of entry $e, or undef when they are.
sub file_mismatch {
    my ($e, $bytes) = @_;
    return sprintf('%d bytes, the manifest says %d', length $bytes, $e->{size}) if length $bytes != $e->{size};
    return 'its SHA-256 differs from the manifest\'s' if Digest::SHA::sha256_hex($bytes) ne $e->{sha256};
    my $id = header_id($bytes);
    return 'not a zstd dictionary' unless defined $id;
    return "its header names dictionary ID $id" if $id != $e->{id};
    return;
}

# The ID in a standard zstd dictionary's header, or undef.
sub header_id {
    my ($bytes) = @_;
    return unless length $bytes > $DICT_HEADER && substr($bytes, 0, 4) eq $DICT_MAGIC;
    my $id = unpack 'V', substr $bytes, 4, 4;
    return $id ? $id : undef;
}


1;

__END__

=head1 NAME

Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest - the manifest format of a dictionary set

=head1 SYNOPSIS

  use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(manifest_date epoch_of);

  my $date = manifest_date(1767225600);    # 2026-01-01T00:00:00Z

=head1 DESCRIPTION

The part of L<Cache::Memcached::RustXS::Zstd::DictionarySet> that reads
and writes its manifest (see
L<Cache::Memcached::RustXS::Zstd::DictionarySet/The manifest>), and the
one home of the manifest's dates, which every C<cmrx-dict> command uses.

=head1 FUNCTIONS

=over 4

=item parse_manifest($dir, $bytes)

The manifest's bytes parsed and checked (a hash DictionarySet blesses);
dies with C<line N: why>.

=item manifest_text($set)

The manifest's text for a set.

=item manifest_date($epoch_or_date [, $what]), epoch_of($date)

A date as the manifest writes it (C<YYYY-MM-DDTHH:MM:SSZ>, UTC; undef
for undef; with C<$what>, anything else croaks naming it), and its epoch
seconds (undef when it is none).

=item is_date, is_count, is_percent, is_id, is_level, shown

Checks of a field's value, and a value as messages show it.

=item check_fallback_fields(\%fields, $where)

Dies saying why a fallback line's fields are wrong.

=item manifest_path($dir), slurp($path), atomic_write($path, $bytes)

The manifest's path, a file's bytes (undef when it cannot be read), and a
write through a new file in the same folder and a rename.

=item file_mismatch($entry, $bytes), header_id($bytes)

Why C<$bytes> are not the file of an entry (undef when they are), and
the ID in a zstd dictionary's header.

=back

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Zstd::DictionarySet>, which reads and
writes its manifest through this module, and its
L<Cache::Memcached::RustXS::Zstd::DictionarySet/The manifest> section.

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
