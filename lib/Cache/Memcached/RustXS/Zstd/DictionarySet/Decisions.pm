package Cache::Memcached::RustXS::Zstd::DictionarySet::Decisions;

# A dictionary set's decisions as the manifest keeps them: the log on the
# set line (where release 0.101, which knows no decisions, keeps it as an
# unknown field), the log synthesized from the entries of a set that has
# none (written by an earlier release), the log followed by what 0.101
# changed since, and the entries' fields that releases knowing no
# decisions read, written from the fold. The state itself is
# DictionarySet::State's fold.

use strict;
use warnings;

use Digest::SHA ();
use Exporter 5.57 'import';

use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(manifest_date epoch_of is_id shown);

our $VERSION = '1.000';

our @EXPORT_OK = qw(decode_log encode_log entries_digest synthesize_log reconcile_log project_entries %KINDS);

our %KINDS = (train => 1, rollback => 1, cancel => 1, retire => 1);

# ---- the log on the set line ---------------------------------------------------
#
# decisions=SEQ,KIND,MADE,EFFECTIVE,ID,PREFIX;... with times in epoch
# seconds ('-' when not known), ID '-' for a cancel, and the prefix's
# bytes , ; and % written %XX.

sub _field_encode { (my $v = $_[0]) =~ s/([,;%])/sprintf '%%%02X', ord $1/ge; return $v }
sub _field_decode { (my $v = $_[0]) =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge; return $v }

sub encode_log {
    my ($decisions) = @_;
    return join ';', map {
        join ',', $_->{seq}, $_->{kind}, (map { defined $_ ? int $_ : '-' } @$_{qw(made effective)}),
                  (defined $_->{id} ? $_->{id} : '-'), _field_encode($_->{prefix})
    } sort { $a->{seq} <=> $b->{seq} } @$decisions;
}

# The decisions of a log; dies saying why it is malformed.
sub decode_log {
    my ($text) = @_;
    my (@out, %seen);
    for my $item (grep { length } split /;/, $text, -1) {
        my ($seq, $kind, $made, $effective, $id, $prefix, @more) = split /,/, $item, -1;
        die 'decision ' . shown($item) . " is not SEQ,KIND,MADE,EFFECTIVE,ID,PREFIX\n"
            if @more || !defined $prefix || $seq !~ /\A[1-9][0-9]{0,9}\z/ || !$KINDS{$kind}
               || grep { !/\A(?:-|[0-9]{1,12})\z/ } $made, $effective;
        die "decision $seq is listed twice\n" if $seen{$seq}++;
        die "decision $seq names no dictionary ID\n" if $kind ne 'cancel' && !is_id($id);
        push @out, { seq => 0 + $seq, kind => $kind, prefix => _field_decode($prefix),
                     id => $kind eq 'cancel' ? undef : $id,
                     made => $made eq '-' ? undef : 0 + $made, effective => $effective eq '-' ? undef : 0 + $effective };
    }
    return [ sort { $a->{seq} <=> $b->{seq} } @out ];
}

# What the entries say to a release that knows no decisions, as a digest:
# a log beside entries of another digest was written before a release
# that knows no decisions changed them.
sub entries_digest {
    my ($entries, $removed) = @_;
    my @lines = map { join ' ', map { defined $_ ? $_ : '' } @$_{qw(id prefix state current_from retired)} }
                sort { $a->{id} <=> $b->{id} } @$entries;
    push @lines, map { "removed $_->{id}" } sort { $a->{id} <=> $b->{id} } @$removed;
    return substr Digest::SHA::sha256_hex(join "\n", @lines), 0, 16;
}

# ---- a log from the entries alone ----------------------------------------------

# The decisions that entries written without a log stand for: each
# dictionary writers used is a train at its current_from (not known: the
# earliest), ended by a retirement at its retired date (not known: at a
# time not known, after the dictionary listed after it, which replaced
# it) unless another started then; a staged one is a train made after
# the others of its prefix; one cancelled before its time (current_from
# after retired), a train cancelled at its retired date.
sub synthesize_log {
    my ($entries) = @_;
    my (@d, %started);
    for my $e (@$entries) {
        my $from = epoch_of($e->{current_from});
        $from = epoch_of($e->{current_from_copy}) unless defined $from;
        # (A current one without a current_from started when it was trained,
        # as a release that knows no staging adds one.)
        $from = epoch_of($e->{trained}) if !defined $from && $e->{state} eq 'current';
        $started{ $e->{prefix} }{$from} = 1 if defined $from;
    }
    my (@current, @staged, @undated, %train);
    my %next;    # index => the index of the next entry of its prefix
    { my %seen; for my $i (reverse 0 .. $#$entries) { my $p = $entries->[$i]{prefix};
                                                      $next{$i} = $seen{$p} if defined $seen{$p}; $seen{$p} = $i } }
    for my $i (0 .. $#$entries) {
        my $e = $entries->[$i];
        my ($from, $retired) = (epoch_of($e->{current_from}), epoch_of($e->{retired}));
        $from = epoch_of($e->{current_from_copy}) unless defined $from;
        my %base = (prefix => $e->{prefix}, id => $e->{id}, order => $i);
        if ($e->{state} eq 'current' && !defined $from) {
            push @current, $train{$i} = { %base, kind => 'train', made => epoch_of($e->{trained}) };
        }
        elsif ($e->{state} eq 'retired' && defined $from && !defined $e->{retired}) {
            push @staged, $train{$i} = { %base, kind => 'train', made => epoch_of($e->{trained}), effective => $from };
        }
        elsif (defined $from && defined $retired && $from > $retired) {
            push @d, $train{$i} = { %base, kind => 'train', made => _min(epoch_of($e->{trained}), $retired), effective => $from },
                     { %base, kind => 'cancel', id => undef, made => $retired, effective => $retired, order => $i + 0.5 };
        }
        else {
            push @d, $train{$i} = { %base, kind => 'train', made => $from, effective => $from };
            # Retired at its date (when no other started then), or at a
            # time not known (no date: a release before dates were kept).
            my $retire = { %base, kind => 'retire', made => $retired, effective => $retired, order => $i + 0.5 };
            # With no date and a later dictionary of its prefix (0.101 adds
            # after the one it retires): replaced by that one, which writers
            # used next; the retirement, of a time not known, is made then.
            if ($e->{state} ne 'retired' || (defined $retired && $started{ $e->{prefix} }{$retired})) { }
            elsif (!defined $retired && defined $next{$i}) { push @undated, [ $retire, $next{$i} ] }
            else { push @d, $retire }
        }
    }
    my @sorted = sort { _key($a->{made}) <=> _key($b->{made}) || $a->{order} <=> $b->{order} } @d;
    # The current one (from a time not written) and the staged one: made
    # after every other decision of their prefix, the current at once. A
    # current one without current_from was added by a release that knows
    # no staging (0.101) after this one wrote the set, so what reads as
    # staged in its prefix (0.101 retires by state alone) came before it.
    my %plain = map { ($_->{prefix} => 1) } @current;
    for my $s ((grep { $plain{ $_->{prefix} } } @staged), @current, (grep { !$plain{ $_->{prefix} } } @staged)) {
        my ($last) = reverse grep { $_->{prefix} eq $s->{prefix} } @sorted;
        $s->{made} = _max($s->{made}, $last ? $last->{made} : ());
        $s->{effective} = $s->{made} unless exists $s->{effective};
        $s->{made} = $s->{effective} if defined $s->{made} && defined $s->{effective} && $s->{made} > $s->{effective};
        push @sorted, $s;
    }
    for my $u (@undated) {
        my ($retire, $by) = @$u;
        $retire->{made} = $train{$by}{effective};
        push @sorted, $retire;
    }
    my $seq = 0;
    return [ map { delete $_->{order}; $_->{seq} = ++$seq; $_ } @sorted ];
}

sub _key { defined $_[0] ? $_[0] : -9**9**9 }
sub _min { my @v = grep { defined } @_; return @v ? (sort { $a <=> $b } @v)[0] : undef }
sub _max { my @v = grep { defined } @_; return @v ? (sort { $b <=> $a } @v)[0] : undef }

# ---- a log that a release knowing no decisions changed -------------------------

# The log of a set whose entries release 0.101 changed after this release
# wrote them, or undef when the entries do not say what this release wrote
# (no `decided` field on an entry the log names: synthesize instead). 0.101
# changes `state` and keeps `decided`, so an entry's two fields differ where
# 0.101 acted: one it retired (decided=current, state=retired) or took up
# again by hand (decided other, state=current), one it added (no decided,
# in no decision). Each such change is a decision effective at once and
# made at a time the entries fix, so that every read finds the same
# decisions: the log's last decision's time, or a train's `trained` date
# (0.101 stamps it when it adds) if later. A read's own time would move
# them with each read, and let a staged decision 0.101 superseded read as
# taken effect once its time passed. A train of what it added, a
# retirement of what it retired with nothing in its place, a rollback to
# what it made current again; newer than every decision of the log, these
# supersede what was staged and pending then, as 0.101 ignored it.
sub reconcile_log {
    my ($log, $entries) = @_;
    my %named = map { (defined $_->{id} ? ($_->{id} => 1) : ()) } @$log;
    return if grep { $named{ $_->{id} } && !defined $_->{decided} } @$entries;
    my $logged = _max(map { $_->{made} } @$log);
    my %trained = map { ($_->{id} => epoch_of($_->{trained})) } @$entries;
    my ($seq, @more) = (scalar(@$log) ? $log->[-1]{seq} : 0);
    my %by_prefix;
    push @{ $by_prefix{ $_->{prefix} } }, $_ for @$entries;
    for my $prefix (sort keys %by_prefix) {
        my @mine = @{ $by_prefix{$prefix} };
        my ($current) = grep { $_->{state} eq 'current' } @mine;
        my @added = grep { !$named{ $_->{id} } } @mine;
        my $retired = grep { $_->{state} eq 'retired' && ($_->{decided} || '') eq 'current' } @mine;
        my @decide = map { +{ kind => 'train', id => $_->{id} } } grep { $_ != ($current || 0) } @added;
        if ($current && !$named{ $current->{id} }) { push @decide, { kind => 'train', id => $current->{id} } }
        elsif ($current && $current->{decided} ne 'current') { push @decide, { kind => 'rollback', id => $current->{id} } }
        elsif (!$current && ($retired || @added)) {
            my ($last) = @decide ? $decide[-1] : grep { ($_->{decided} || '') eq 'current' } @mine;
            push @decide, { kind => 'retire', id => $last->{id} };
        }
        my $made = $logged;    # never earlier than the one before it in its prefix
        for my $d (@decide) {
            $made = _max($made, $d->{kind} eq 'train' ? $trained{ $d->{id} } : ());
            push @more, { %$d, seq => ++$seq, prefix => $prefix, made => $made, effective => $made };
        }
    }
    return [ @$log, @more ];
}

# ---- the entries from the fold --------------------------------------------------

# Writes into each entry what a release that knows no decisions needs to
# read the same writers from it ($state: State's state_at at the moment
# of the write): the writer current from when it took effect, the pending
# one staged (retired, with current_from and no retired date), the others
# retired with when writers stopped (a date not known is kept as it is);
# and in `decided` the state it has at that moment (current, staged or
# retired), which 0.101 keeps as it is when it changes `state`.
sub project_entries {
    my ($entries, $state) = @_;
    my $f = $state->{fold};
    my %row = map { ($_->{entry}{id} => $_) } @{ $state->{rows} };
    for my $e (@$entries) {
        my $row = $row{ $e->{id} } or next;
        my $u = $f->{used}{ $e->{id} };
        delete @$e{qw(written_until written_from)};
        $e->{decided} = $row->{state};
        if ($row->{state} eq 'current') {
            $e->{state} = 'current';
            delete $e->{retired};
            _set_date($e, current_from => $row->{since});
        }
        elsif ($row->{state} eq 'staged') {
            $e->{state} = 'retired';
            delete $e->{retired};
            _set_date($e, current_from => $row->{since});
        }
        else {
            $e->{state} = 'retired';
            $e->{retired} = $row->{since} if defined $row->{since};
            if ($u) { _set_date($e, current_from => manifest_date($u->{from})) }
            elsif (defined $e->{current_from}
                   && (!defined $e->{retired} || epoch_of($e->{current_from}) <= epoch_of($e->{retired}))) {
                delete $e->{current_from};    # never used: no time it was written with
            }
        }
    }
    return;
}

sub _set_date {
    my ($e, $name, $date) = @_;
    if (defined $date) { $e->{$name} = $date } else { delete $e->{$name} }
    return;
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Zstd::DictionarySet::Decisions - the decisions of a dictionary set as its manifest keeps them

=head1 SYNOPSIS

  use Cache::Memcached::RustXS::Zstd::DictionarySet::Decisions qw(decode_log encode_log);

  my $text = '1,train,1767225600,1767229201,7,user:';
  my $log = decode_log($text);
  print "decision $log->[0]{seq}: $log->[0]{kind} of dictionary $log->[0]{id} for $log->[0]{prefix}\n";

=head1 DESCRIPTION

The part of L<Cache::Memcached::RustXS::Zstd::DictionarySet> that keeps
its decisions (see
L<Cache::Memcached::RustXS::Zstd::DictionarySet/The newest decision holds>)
in the manifest, and the fields of its entries that releases knowing no
decisions read. What the decisions mean at a moment is
L<Cache::Memcached::RustXS::Zstd::DictionarySet::State>'s C<fold>.

The log is the C<decisions> field of the manifest's C<set> line: the
decisions separated by C<;>, each C<SEQ,KIND,MADE,EFFECTIVE,ID,PREFIX>
(times in epoch seconds, C<-> when not known; ID C<-> for a cancel; the
bytes C<,>, C<;> and C<%> of the prefix written C<%XX>). Release 0.101
keeps it as a field it does not know. Beside it, C<decisions_of> is a
digest of what the entries say to such a release: when a release that
knows no decisions has changed the entries since, the log no longer
describes them: what that release changed follows the log as decisions
(C<reconcile_log>).

=head1 FUNCTIONS

=over 4

=item decode_log($text), encode_log(\@decisions)

The decisions of a log (hash references: C<seq>, C<kind>, C<prefix>,
C<id>, C<made>, C<effective>), in order; C<decode_log> dies saying why a
log is malformed. And the log of decisions.

=item entries_digest(\@entries, \@removed)

The digest of the entries' fields that releases knowing no decisions
read (C<id>, C<prefix>, C<state>, C<current_from>, C<retired>) and of
the removed IDs.

=item synthesize_log(\@entries)

The decisions that entries written without a log stand for: each
dictionary writers used is a C<train> at its C<current_from> (not known:
earlier than any), ended by a C<retire> at its C<retired> date unless
another dictionary of its prefix started then (no date: at a time not
known, made after the train of the dictionary listed next for its prefix,
which replaced it); a staged one is a C<train> made after the others of its prefix
(but before a current one without C<current_from> of its prefix, which
0.101 added after it);
one cancelled before its time (C<current_from> after C<retired>), a
C<train> and a C<cancel> at its C<retired> date.

=item reconcile_log(\@log, \@entries)

The log of a set whose entries release 0.101 changed after the log was
written, or undef when the entries do not say what was written (an entry
the log names without C<decided>). Each entry whose C<state> differs from
its C<decided>, or that no decision names, is a change of 0.101's; they
follow the log as decisions effective at once, each made at the time of
the log's last decision, or for a C<train> at the C<trained> date 0.101
stamped on the dictionary it added if that is later (never earlier than
the decision before it of its prefix): a C<train> of each dictionary
0.101 added, a C<retire> of a writer it retired with nothing in its
place, a C<rollback> to a dictionary made current again. The times come
from the set alone, so every read finds the same decisions; a decision
staged in the log and still pending at that time is superseded and never
takes effect.

=item project_entries(\@entries, $state)

Writes into the entries what a release that knows no decisions needs to
read the same writers (C<$state>: State's C<state_at> at the moment of
the write): the writer C<state=current> from when it took effect, the
pending one staged (C<state=retired> with C<current_from> and no
C<retired>), every other one retired with when writers stopped using it;
and C<decided>, the state each has at that moment (C<current>,
C<staged>, C<retired>).

=item %KINDS

The kinds of decision: C<train>, C<rollback>, C<cancel>, C<retire>.

=back

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Zstd::DictionarySet>,
L<Cache::Memcached::RustXS::Zstd::DictionarySet::State>

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
