package Cache::Memcached::RustXS::Zstd::DictionarySet::State;

# A dictionary set's state over time: the clock, and the one function that
# folds a set's decisions into what each prefix's writers use at a moment,
# what is pending, and what writers used before. Every reader of a set
# asks it; nothing else computes a state.

use strict;
use warnings;

use Carp ();
use Exporter 5.57 'import';
use Time::HiRes ();

use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(manifest_date);

our $VERSION = '1.000';

our @EXPORT_OK = qw(now fold state_at staged_start);

# ---- the clock -----------------------------------------------------------------

# What now() returns when set: a code reference giving epoch seconds.
# Tests move time with it instead of sleeping; cmrx-dict sets it from the
# environment variable CMRX_DICT_NOW.
our $Clock;

sub now { $Clock ? $Clock->() : Time::HiRes::time() }

# When a decision staged for $stage seconds takes effect when its set is
# written at $written (epoch seconds): the next whole second after both,
# and one more for the write and the command that asked for it to end, so
# that it is at least $stage seconds after either.
sub staged_start {
    my ($written, $stage) = @_;
    my $at = $written + $stage;
    return ($at == int $at ? $at : int($at) + 1) + 1;
}

# ---- the fold ------------------------------------------------------------------

# The decisions (hash references: seq, kind, prefix, id, made, effective)
# folded at $at, in the order they were made (seq). A decision supersedes
# the one of its prefix still waiting to take effect when it is made;
# whatever is not superseded takes effect at its effective time. Returns {
#   prefixes  => { prefix => { writer (an ID, or undef: the fallback),
#                  since, before (what writers used before), pending } },
#   decisions => { seq => { status (in effect, took effect, superseded,
#                  pending), by (the seq that superseded it), cancels } },
#   used      => { ID => { from, until (undef while in use) } },
#   next_change => the first effective time after $at, or undef }.
sub fold {
    my ($decisions, $at) = @_;
    my (%prefix, %status, %used, $next);
    my $take = sub {
        my ($p, $d) = @_;
        $status{ $d->{seq} }{status} = 'took effect';
        return if $d->{kind} eq 'cancel';
        my $to = $d->{kind} eq 'retire' ? undef : $d->{id};
        $used{ $p->{writer} }{until} = $d->{effective} if defined $p->{writer};
        @$p{qw(before writer since seq)} = ($p->{writer}, $to, $d->{effective}, $d->{seq});
        $used{$to} = { from => $d->{effective} } if defined $to;
    };
    for my $d (sort { $a->{seq} <=> $b->{seq} } grep { $_->{made} <= $at } @$decisions) {
        my $p = $prefix{ $d->{prefix} } ||= {};
        my $w = $p->{waiting};
        $take->($p, delete $p->{waiting}) if $w && $w->{effective} <= $d->{made};
        if ($d->{kind} eq 'retire' && !(defined $p->{writer} && $p->{writer} eq $d->{id})) {
            # Of a dictionary writers do not use: it only dates its retirement.
            $status{ $d->{seq} }{status} = 'took effect';
            $used{ $d->{id} }{until} = $d->{effective} if $used{ $d->{id} };
            next;
        }
        if ($w = delete $p->{waiting}) {
            @{ $status{ $w->{seq} } }{qw(status by)} = ('superseded', $d->{seq});
            $status{ $d->{seq} }{cancels} = $w->{seq} if $d->{kind} eq 'cancel';
        }
        $p->{waiting} = $d;
    }
    for my $p (values %prefix) {
        my $w = delete $p->{waiting} or next;
        if ($w->{effective} <= $at) { $take->($p, $w) }
        else { $p->{pending} = $w; $status{ $w->{seq} }{status} = 'pending';
               $next = $w->{effective} if !defined $next || $w->{effective} < $next }
    }
    for my $p (values %prefix) { $status{ $p->{seq} }{status} = 'in effect' if defined $p->{seq} }
    return { prefixes => \%prefix, decisions => \%status, used => \%used, next_change => $next };
}

# ---- the state at a time ----------------------------------------------------------

# The state of a set at $at (epoch seconds), from its decisions folded:
# rows (each entry's state and since when, in the entries' order, then the
# removed ones), writers (prefix => entry), previous (prefix => the entry
# writers used before the current one), pending (prefix => the decision
# waiting), loads (every entry: what a reader loads), next_change, fold.
sub state_at {
    my ($entries, $removed, $at, $decisions) = @_;
    Carp::croak('state_at: a time (epoch seconds) is needed') unless defined $at;
    my $f = fold($decisions || [], $at);
    my %by_id = map { ($_->{id} => $_) } @$entries;
    my (%writers, %previous, %pending, %state);
    for my $prefix (keys %{ $f->{prefixes} }) {
        my $p = $f->{prefixes}{$prefix};
        $writers{$prefix} = $by_id{ $p->{writer} } if defined $p->{writer} && $by_id{ $p->{writer} };
        $previous{$prefix} = $by_id{ $p->{before} } if defined $p->{before} && $by_id{ $p->{before} };
        next unless $p->{pending};
        $pending{$prefix} = $p->{pending};
        $state{ $p->{pending}{id} } = [ 'staged', $p->{pending}{effective} ] if defined $p->{pending}{id};
        $state{ $p->{writer} } = [ 'current', $p->{since} ] if defined $p->{writer};
    }
    for my $prefix (keys %writers) {
        $state{ $writers{$prefix}{id} } ||= [ 'current', $f->{prefixes}{$prefix}{since} ];
    }
    my @rows;
    for my $e (@$entries) {
        my $u = $f->{used}{ $e->{id} };
        my ($state, $since) = @{ $state{ $e->{id} } || [ 'retired', $u ? $u->{until} : _never_used($e, $f, $decisions) ] };
        push @rows, { entry => $e, state => $state, since => manifest_date($since), wrote => $u ? 1 : 0 };
    }
    push @rows, map { +{ entry => $_, state => 'removed', since => $_->{removed}, wrote => 0 } } @$removed;
    return { rows => \@rows, writers => \%writers, previous => \%previous, pending => \%pending,
             loads => [ @$entries ], next_change => $f->{next_change}, fold => $f };
}

# When a dictionary no writer used was set aside: the made time of the
# decision that superseded its last decision, or undef.
sub _never_used {
    my ($e, $f, $decisions) = @_;
    my ($mine) = reverse grep { defined $_->{id} && $_->{id} eq $e->{id} && $_->{kind} ne 'retire' } @{ $decisions || [] };
    my $by = $mine && $f->{decisions}{ $mine->{seq} } ? $f->{decisions}{ $mine->{seq} }{by} : undef;
    my ($d) = defined $by ? grep { $_->{seq} == $by } @$decisions : ();
    return $d ? $d->{made} : undef;
}

1;

__END__

=head1 NAME

Cache::Memcached::RustXS::Zstd::DictionarySet::State - a dictionary set's state over time

=head1 SYNOPSIS

  use Cache::Memcached::RustXS::Zstd::DictionarySet::State qw(now state_at);

  my $state = state_at([], [], now());
  print scalar keys %{ $state->{writers} }, " prefixes written with a dictionary\n";

=head1 DESCRIPTION

The part of L<Cache::Memcached::RustXS::Zstd::DictionarySet> that says
what a set is at a moment: the fold of its decisions by the rule in
L<Cache::Memcached::RustXS::Zstd::DictionarySet/The newest decision holds>.
DictionarySet's methods, and every C<cmrx-dict> command that reads a set,
take their states from it.

=head1 FUNCTIONS

=over 4

=item fold(\@decisions, $at)

The decisions (hash references: C<seq>, C<kind>, C<prefix>, C<id>,
C<made>, C<effective>) folded at
C<$at> (epoch seconds), in the order of C<seq>: C<prefixes> (for each
prefix: C<writer>, the ID its writers use, or undef for the whole-cache
entry or fallback; C<since>, when that took effect; C<before>, the ID they
used before; C<pending>, the decision waiting), C<decisions> (for each
C<seq>: C<status>, C<by>, C<cancels>), C<used> (for each ID writers have
used: C<from> and C<until>, undef while in use) and C<next_change> (the
first effective time after C<$at>, or undef).

=item state_at(\@entries, \@removed, $at, \@decisions)

The state of a set at C<$at> from its decisions folded: C<rows>, each
entry's C<state> (C<current>, C<staged>, C<retired>, C<removed>), C<since>
when (a manifest date, or undef when not known) and C<wrote> (whether
writers used it by C<$at>); C<writers> (the entry each prefix's writers
use); C<previous> (the entry they used before); C<pending> (the decision
waiting, by prefix); C<loads> (every entry: what a reader holding the set
loads); C<next_change>; and C<fold>, the fold itself.

=item now()

The clock they all read: epoch seconds, from
C<$Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock> (a code
reference) when it is set, else the system's. C<cmrx-dict> sets it from
the environment variable C<CMRX_DICT_NOW> (epoch seconds), so that what a
set does at a later moment can be tried without waiting for it.

=item staged_start($written, $stage)

When a decision staged for C<$stage> seconds takes effect, its set written
at C<$written>: the next whole second after C<$written + $stage>, and one
more (for the command to end).

=back

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Zstd::DictionarySet/The newest decision holds>,
the rule this fold computes, written once; the log it folds,
L<Cache::Memcached::RustXS::Zstd::DictionarySet/The manifest>.

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
